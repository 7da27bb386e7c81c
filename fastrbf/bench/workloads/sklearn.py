"""scikit-learn estimator workloads: the overhead of ``fastrbf.sklearn``'s estimators
over the functional calls they wrap (none without scikit-learn)."""

import numpy as np

from fastrbf.models import kernel_ridge, rbf_network

from ..harness import BASELINE, FASTRBF, Contender, Workload
from .common import seeded_rng, try_import


def workloads() -> list[Workload]:
    """The estimator-overhead workloads (none without scikit-learn >= 1.6)."""
    return _sklearn_overhead_workloads()


def _sklearn_overhead_workloads():
    """fastrbf.sklearn's estimators against the functional call each wraps (kind FLOOR:
    the wrapper can only add to it): the overhead of scikit-learn's validation and
    bookkeeping, at sizes where the call takes milliseconds.  One thread on both sides:
    with two, the wake-up of the thread pools moves single calls by several ms either
    way, which would drown the wrapper's cost.  None without scikit-learn."""
    fsk = try_import("fastrbf.sklearn")  # None without scikit-learn >= 1.6
    if fsk is None:
        return []

    gamma, alpha = 0.1, 1e-3

    def setup(size):
        rng = seeded_rng()
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
