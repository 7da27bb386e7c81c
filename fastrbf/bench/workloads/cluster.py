"""k-means workloads: one Lloyd iteration (small and large K, float64 and float32)
against the NumPy reference, scikit-learn, scikit-learn-intelex and faiss, and a
20-iteration ``kmeans`` run and a run to convergence (brute force and Hamerly's bounds,
against scikit-learn's Lloyd and Elkan, on the same initial centres), and one Lloyd iteration on a sparse
text-like CSR matrix (against scikit-learn and scikit-learn-intelex; the NumPy
reference would densify it).  The essential cost of an iteration is the GEMM form of the
point-centre distances (2 N K d flops) and one read of the points.

The peers' k-means estimators include their set-up in every fit, so they are timed
per iteration by :class:`PerIteration`, which subtracts a 1-iteration fit from a
longer one.

``kernel-kmeans-exact``: kernel k-means (Gaussian kernel) on Gaussian blobs, fastrbf's
matrix-free ``method="exact"`` against tslearn's ``KernelKMeans``, whole fits of at most
:data:`KERNEL_KMEANS_ITER` iterations each.  tslearn takes no initial labels: it draws
its own (uniform random labels from ``random_state``) and, when a cluster empties, starts
again from new ones (up to 10 times); the first fastrbf row starts from tslearn's
first draw (the same start unless tslearn restarted: the accuracy note gives its
attempts), the second from fastrbf's k-means++.  tslearn holds the N x N Gram matrix
(2-D data is read as N series of d one-dimensional steps, flattened back for
scikit-learn's ``rbf`` kernel: the Gaussian kernel of the d-dimensional points with the
same gamma) and its distance ``2 - 2 S[i, c] / W_c`` leaves out ``||mu_c||^2 =
T_c / W_c^2`` (its own comment: "k(x, x) = 1 ... including the centroid"), so it is not
Lloyd's step on the kernel k-means objective J and its ``inertia_`` is ``2 J`` at a
fixed point (``sum_i (2 - 2 S[i, c_i] / W_c) = 2 (n - sum_c T_c / W_c)``); the note gives
J of every fit's labels (:func:`fastrbf.kernel_kmeans_objective`).

``kernel-kmeans-large``: ``method="nystroem"`` (1000 landmarks) at a million points, no
peer (an N x N Gram matrix is out of reach there); its accuracy note compares the
exact objective of its labels (``predict``) on a subsample with the exact method's
inertia on that subsample."""

import importlib
import time
import warnings

import numpy as np

from fastrbf import reference
from fastrbf._validation import check_memory
from fastrbf.cluster._kmeans import kmeans, lloyd_assign, lloyd_update
from fastrbf.models.kernel_clustering import COMPONENTS_PER_CLUSTER, kernel_kmeans, kernel_kmeans_objective

from ..harness import FASTRBF, NUMPY, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import optional_peer, run_threads, sklearnex_code_path, sklearnex_lloyd


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
        _kernel_kmeans_exact_workload(),
        _kernel_kmeans_large_workload(),
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


# ---------------------------------------------------------------- kernel k-means
#: the iteration cap of both fits of ``kernel-kmeans-exact`` (a tslearn iteration at N =
#: 20000 reads its 3.2 GB Gram matrix about twice: some 10 s on 2 cores)
KERNEL_KMEANS_ITER = 20
#: tslearn's ``random_state`` (its initial labels: ``RandomState(seed).randint(K, size=n)``)
TSLEARN_SEED = 0


def kernel_blobs(n: int, d: int, K: int, spread: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``n`` points of ``K`` Gaussian blobs in ``d`` dimensions (unit variance around
    centres drawn from ``N(0, spread^2)``), the blob of each, and the Gaussian kernel's
    ``gamma = 1 / (d var(X))`` (scikit-learn's ``"scale"`` rule).

    Examples
    --------
    >>> X, y, gamma = kernel_blobs(100, 4, 3, 3.0)
    >>> X.shape, int(y.max()) < 3, 0 < gamma < 1
    ((100, 4), True, True)
    """
    rng = seeded_rng()
    centres = spread * rng.standard_normal((K, d))
    y = rng.integers(K, size=n)
    X = centres[y] + rng.standard_normal((n, d))
    return X, y, 1.0 / (d * float(X.var()))


def _ari(y, labels):
    """Adjusted Rand index against the blobs (scikit-learn's; None without it)."""
    metrics = try_import("sklearn.metrics")
    return None if metrics is None else float(metrics.adjusted_rand_score(y, labels))


def _tslearn_kernel_kmeans(a: dict) -> None:
    """tslearn's ``KernelKMeans`` fit (``kernel="rbf"``, the same gamma), its kernel
    matrix on the run's threads; the attempts it made (a restart after an empty
    cluster draws new labels) are counted without changing what it does."""
    n, K = a["X"].shape[0], a["K"]
    # its Gram matrix, the per-thread blocks it is made from and a cluster's columns copied
    check_memory(int(2.5 * n * n * 8), f"tslearn KernelKMeans: the {n} x {n} Gram matrix", "use fewer rows")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its import warns that h5py is absent; scikit-learn's renamed arguments
        base = importlib.import_module("tslearn.clustering").KernelKMeans

        class Counted(base):  # type: ignore[misc,valid-type]
            def _fit_one_init(self, Kmat, rs):
                self.attempts_ = getattr(self, "attempts_", 0) + 1
                return super()._fit_one_init(Kmat, rs)

        km = Counted(n_clusters=K, kernel="rbf", kernel_params={"gamma": a["gamma"]}, n_init=1,
                     max_iter=KERNEL_KMEANS_ITER, random_state=TSLEARN_SEED, n_jobs=run_threads()).fit(a["X"])
    a["tslearn"] = km.labels_, float(km.inertia_), int(km.n_iter_), km.attempts_


def _kernel_kmeans_exact_workload():
    d, K = 8, 10

    def setup(n):
        X, y, gamma = kernel_blobs(n, d, K, 3.0)
        init = np.random.RandomState(TSLEARN_SEED).randint(K, size=n)  # tslearn's first draw
        return {"X": X, "y": y, "gamma": gamma, "K": K, "init": init}

    def ours(a, init="same"):
        res = kernel_kmeans(a["X"], K, gamma=a["gamma"], method="exact", init=a["init"] if init == "same" else init,
                            n_init=1, max_iter=KERNEL_KMEANS_ITER, tol=0, seed=0)
        a[f"ours_{init}"] = res
        return res

    def accuracy(a):
        X, g = a["X"], a["gamma"]
        parts = []
        for init, what in (("same", "fastrbf from tslearn's first draw"), ("k-means++", "fastrbf k-means++")):
            res = a.get(f"ours_{init}") or ours(a, init)
            J = kernel_kmeans_objective(X, res.labels, gamma=g)  # its inertia: distances to the previous means
            ari = _ari(a["y"], res.labels)
            parts.append(f"{what}: J {J:.6g} (its inertia {res.inertia:.6g}), {res.n_iter} iterations"
                         f"{'' if res.converged else ' (not converged)'}" + ("" if ari is None else f", ARI {ari:.3f}"))
        if "tslearn" in a:
            labels, inertia, n_iter, attempts = a["tslearn"]
            J = kernel_kmeans_objective(X, labels, gamma=g)
            ari = _ari(a["y"], labels)
            parts.append(f"tslearn: J {J:.6g} (its inertia_ {inertia:.6g} = {inertia / J:.4f} J; 2 J at a fixed "
                         f"point: its distance leaves out ||mu_c||^2), {n_iter} iterations, {attempts} start"
                         f"{'' if attempts == 1 else 's (restarted after empty clusters: not the same start)'}"
                         + ("" if ari is None else f", ARI {ari:.3f}"))
        return ("objective J (kernel_kmeans_objective of the labels, exact; lower is better) of each fit: "
                + "; ".join(parts))

    cs = [Contender("fastrbf kernel_kmeans exact, tslearn's initial labels", FASTRBF, ours),
          Contender("fastrbf kernel_kmeans exact, k-means++", FASTRBF, lambda a: ours(a, "k-means++"))]
    cs.append(optional_peer("tslearn KernelKMeans (N x N Gram matrix)", "tslearn.clustering", _tslearn_kernel_kmeans,
                            package="tslearn"))
    return Workload("kernel-kmeans-exact", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d={d}, K={K} Gaussian blobs, Gaussian kernel gamma="
                              f"{a['gamma']:.4g} (1/(d var X)), whole fits of at most {KERNEL_KMEANS_ITER} iterations "
                              f"(tslearn seeds itself: random labels, new ones after an empty cluster)",
                    sizes=(2000, 5000, 20000), accuracy=accuracy)


def _kernel_kmeans_large_workload():
    d, K, M = 16, 20, 1000

    def setup(size):
        n, n_sub = size
        X, y, gamma = kernel_blobs(n, d, K, 1.0)  # overlapping blobs: the features' rank matters
        sub = np.sort(np.random.default_rng(1).choice(n, size=n_sub, replace=False))
        return {"X": X, "gamma": gamma, "sub": X[sub]}

    def ours(a):
        res = kernel_kmeans(a["X"], K, gamma=a["gamma"], method="nystroem", n_landmarks=M, seed=0)
        a["res"] = res
        return res

    def accuracy(a):
        res, sub, g = a.get("res") or ours(a), a["sub"], a["gamma"]
        labels = res.predict(sub)
        J = kernel_kmeans_objective(sub, labels, gamma=g)
        t0 = time.perf_counter()
        exact = kernel_kmeans(sub, K, gamma=g, method="exact", seed=0)
        t_exact = time.perf_counter() - t0
        refined = kernel_kmeans(sub, K, gamma=g, method="exact", init=labels)
        return (f"on {sub.shape[0]} of the points: exact objective of its labels (predict) {J:.6g}, "
                f"{J / exact.inertia:.4f} x the exact method's inertia {exact.inertia:.6g} (k-means++, {exact.n_iter} "
                f"iterations, {t_exact:.1f} s), {J / refined.inertia:.4f} x that of the exact method started from "
                f"its labels; the Nystroem fit took {res.n_iter} iterations"
                f"{'' if res.converged else ' (not converged)'}")

    cs = [Contender(f"fastrbf kernel_kmeans nystroem, {M} landmarks", FASTRBF, ours)]
    return Workload("kernel-kmeans-large", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d={d}, K={K} overlapping Gaussian blobs, Gaussian kernel gamma="
                              f"{a['gamma']:.4g} (1/(d var X)), {M} landmarks, rank "
                              f"{min(M, COMPONENTS_PER_CLUSTER * K)} (the default), k-means++",
                    sizes=((50000, 5000), (1_000_000, 20000)), accuracy=accuracy)
