"""An RBF network against an RBF-kernel SVM on the two-moons problem.

The data come from ``sklearn.datasets.make_moons`` (generated, no download).  The
network has K k-means centres, one Gaussian width and least-squares output weights
(``fastrbf.rbf_network(..., classify=True)``); the SVM is scikit-learn's ``SVC`` with
the same Gaussian kernel width.  The width comes from the median heuristic,
``gamma = 1 / median ||x - x'||^2``; a second network learns its width from there
(``learn_gamma=True``: gradient steps on the training squared error, weights re-solved
at every step).

Run::

    python examples/rbf_network_vs_svm.py            # 20000 training points
    python examples/rbf_network_vs_svm.py --quick    # 1000 training points, seconds

It prints the test accuracy and the fit time of each model.  The fit times exclude
numba's one-off compilation (a small warm-up fit runs first).
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_moons
from sklearn.svm import SVC

import fastrbf


def median_heuristic_gamma(X, max_points=1000, seed=0):
    """``1 / median`` of the squared pairwise distances of (a subsample of) ``X``."""
    rng = np.random.default_rng(seed)
    S = X[rng.choice(X.shape[0], min(max_points, X.shape[0]), replace=False)]
    D = fastrbf.sqdist(S)
    return 1.0 / np.median(D[np.triu_indices(S.shape[0], 1)])


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small problem (seconds)")
    p.add_argument("--centers", type=int, default=30, help="RBF network centres (default 30)")
    args = p.parse_args(argv)

    n_train = 1000 if args.quick else 20000
    X, y = make_moons(n_train + 5000, noise=0.25, random_state=0)
    X_tr, y_tr, X_te, y_te = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    gamma = median_heuristic_gamma(X_tr)
    print(f"two moons: {n_train} training points, {X_te.shape[0]} test points, noise 0.25")
    print(f"median heuristic: gamma = {gamma:.3f}")

    # warm-up: numba compiles each kernel on first use (cached on disk afterwards)
    fastrbf.rbf_network(X_tr[:200], y_tr[:200], n_centers=5, gamma=gamma, classify=True, seed=0,
                        learn_gamma=True, max_gamma_iter=2)

    net, t_net = timed(lambda: fastrbf.rbf_network(X_tr, y_tr, n_centers=args.centers, gamma=gamma,
                                                   classify=True, seed=0))
    learned, t_learn = timed(lambda: fastrbf.rbf_network(X_tr, y_tr, n_centers=args.centers, gamma=gamma,
                                                       classify=True, seed=0, learn_gamma=True))
    svc, t_svc = timed(lambda: SVC(kernel="rbf", gamma=gamma, C=1.0).fit(X_tr, y_tr))

    results = [
        (f"fastrbf.rbf_network, K={args.centers}", np.mean(net.predict(X_te) == y_te), t_net),
        (f"fastrbf.rbf_network, K={args.centers}, learn_gamma (gamma {learned.gamma[0]:.3f})",
         np.mean(learned.predict(X_te) == y_te), t_learn),
        (f"scikit-learn SVC (rbf, C=1), {svc.support_.shape[0]} support vectors",
         svc.score(X_te, y_te), t_svc),
    ]
    width = max(len(name) for name, _, _ in results)
    for name, acc, t in results:
        print(f"{name:{width}s}  accuracy {acc:.4f}  fit {t * 1e3:8.1f} ms")
    return results


if __name__ == "__main__":
    main()
