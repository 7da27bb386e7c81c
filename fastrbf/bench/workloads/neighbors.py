"""Neighbour workloads: ``knn`` against the NumPy reference and the brute force of
scikit-learn, scikit-learn-intelex and faiss (``IndexFlatL2``, float32); ``knn`` at low
dimension (its kd-tree) against the kd-trees of scikit-learn, SciPy and pykdtree; and
the Nadaraya-Watson estimator against the NumPy reference.  kNN's essential cost is the
GEMM form of the distances (the selection is not counted); Nadaraya-Watson's, one exp
per pair.  The kd-tree rows time the build and the queries together (each call builds
its tree, as ``knn`` does), on the run's threads (pykdtree's OpenMP threads limited to
them around each call)."""

import numpy as np

from fastrbf import reference
from fastrbf.neighbors._knn import knn, nadaraya_watson

from ..harness import FASTRBF, NUMPY, PEER, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import (
    faiss_knn,
    faiss_knn_index,
    optional_peer,
    run_threads,
    sklearnex_code_path,
    sklearnex_kneighbors,
    sklearnex_knn_index,
)


def workloads() -> list[Workload]:
    """The neighbour workloads, in the order of the report."""
    return [_knn_workload("knn", 16, ((5000, 1000), (22000, 3000), (100000, 10000))),
            _knn_workload("knn-manyd", 1024, ((5000, 500), (20000, 2000))), _knn_lowd_workload(), _nw_workload()]


def _knn_workload(name, d, sizes):
    def setup(size):
        rng = seeded_rng()
        n, m = size
        X = rng.standard_normal((n, d))
        Q = rng.standard_normal((m, d))
        data = {"X": X, "Q": Q}
        skn = try_import("sklearn.neighbors")
        if skn is not None:
            data["nn"] = skn.NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X)
        return data

    def sklearnex_knn(a):  # fitted on the first call (the warm-up), only the queries are timed afterwards
        if "nnx" not in a:
            a["nnx"] = sklearnex_knn_index(a["X"], 10)
        return sklearnex_kneighbors(a["nnx"], a["Q"])

    def faiss_search(a):
        if "faiss" not in a:
            a["faiss"] = faiss_knn_index(a["X"])
        return faiss_knn(a["faiss"], a["Q"], 10)

    cs = [
        Contender("fastrbf knn", FASTRBF, lambda a: knn(a["X"], a["Q"], 10)),
        Contender("numpy reference (distance rows + argsort)", NUMPY, lambda a: reference.knn(a["X"], a["Q"], 10),
                  full=False),
    ]
    cs.append(optional_peer("scikit-learn NearestNeighbors brute", "sklearn.neighbors",
                            lambda a: a["nn"].kneighbors(a["Q"]), package="sklearn"))
    cs += [optional_peer("sklearnex NearestNeighbors brute", "sklearnex", sklearnex_knn, package="sklearnex",
                         note=sklearnex_code_path("NearestNeighbors.kneighbors")),
           optional_peer("faiss IndexFlatL2 float32", "faiss", faiss_search, package="faiss")]
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["Q"].shape[0], "pairs/s", cs,
                    lambda a: f"k=10, {a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d={d}",
                    sizes=sizes, cost=_knn_cost)


def _pykdtree_knn(a, k):
    from pykdtree.kdtree import KDTree as PyKDTree
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=run_threads(), user_api="openmp"):
        return PyKDTree(a["X"]).query(a["Q"], k=k)


def _knn_lowd_workload():
    k = 8

    def setup(size):
        rng = seeded_rng()
        n, m = size
        return {"X": rng.standard_normal((n, 3)), "Q": rng.standard_normal((m, 3))}

    cs = [
        Contender('fastrbf knn method="tree"', FASTRBF, lambda a: knn(a["X"], a["Q"], k, method="tree")),
        Contender('fastrbf knn method="brute"', FASTRBF, lambda a: knn(a["X"], a["Q"], k, method="brute"), full=False),
    ]
    skn = try_import("sklearn.neighbors")
    if skn is not None:
        cs += [
            Contender("scikit-learn KDTree (queries on 1 thread)", PEER,
                      lambda a: skn.KDTree(a["X"]).query(a["Q"], k=k)),
            Contender('scikit-learn NearestNeighbors(algorithm="kd_tree", n_jobs=threads)', PEER,
                      lambda a: skn.NearestNeighbors(n_neighbors=k, algorithm="kd_tree", n_jobs=run_threads())
                      .fit(a["X"]).kneighbors(a["Q"])),
        ]
    sps = try_import("scipy.spatial")
    if sps is not None:
        cs.append(Contender("SciPy cKDTree(workers=threads)", PEER,
                            lambda a: sps.cKDTree(a["X"]).query(a["Q"], k=k, workers=run_threads())))
    cs.append(optional_peer("pykdtree", "pykdtree", lambda a: _pykdtree_knn(a, k), package="pykdtree"))
    return Workload("knn-lowd", setup, lambda a: a["Q"].shape[0], "queries/s", cs,
                    lambda a: f"k={k}, {a['X'].shape[0]} training x {a['Q'].shape[0]} queries, d=3, build + queries",
                    sizes=((100000, 10000), (300000, 30000), (1000000, 100000)))


def _knn_cost(a):
    (n, d), m = a["X"].shape, a["Q"].shape[0]
    return Cost(flops=2.0 * n * m * d, bytes_read=(n + m) * d * 8.0, bytes_written=m * 10 * 16.0)


def _nw_cost(a):
    (n, d), m = a["X"].shape, a["Q"].shape[0]
    return Cost(flops=2.0 * n * m * (d + 2), bytes_read=((n + m) * d + n) * 8.0, bytes_written=m * 8.0,
                exps=float(n) * m)


def _nw_workload():
    gamma = 0.5

    def setup(size):
        rng = seeded_rng()
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
                    sizes=((5000, 2000), (10000, 4500), (20000, 10000)), cost=_nw_cost)
