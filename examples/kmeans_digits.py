"""k-means on scikit-learn's bundled handwritten digits, against scikit-learn's KMeans.

``sklearn.datasets.load_digits`` ships with scikit-learn (1797 images of 8 x 8 pixels,
64 features, no download).  ``fastrbf.kmeans`` (k-means++ seeding, then Lloyd) finds
K = 10 centres; the adjusted Rand index (ARI) measures how well the clusters match the
true digits (1 = perfectly, 0 = chance).  Both libraries run with the same number of
restarts over several seeds; the best inertia of the restarts is kept, as in
scikit-learn.

Run::

    python examples/kmeans_digits.py                              # 10 seeds, n_init 10
    python examples/kmeans_digits.py --quick --centres c.png      # 3 seeds, n_init 2

``--centres PATH`` saves the 10 centres as 8 x 8 images (needs matplotlib), each titled
with the most common true digit of its cluster.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score

import fastrbf


def save_centres(path, centers, labels, y):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("The picture needs matplotlib: pip install matplotlib (or fastrbf[plot]), "
                         "or leave out --centres.") from None
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 5, figsize=(8, 3.8), constrained_layout=True)
    for k, ax in enumerate(axes.flat):
        members = y[labels == k]
        major = np.bincount(members, minlength=10).argmax()
        ax.imshow(centers[k].reshape(8, 8), cmap="gray_r", interpolation="nearest")
        ax.set_title(f"mostly {major} ({np.mean(members == major):.0%})", fontsize=9)
        ax.axis("off")
    fig.suptitle("fastrbf.kmeans centres of the digits (K = 10)", fontsize=10)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer seeds and restarts (seconds)")
    p.add_argument("--centres", metavar="PATH", help="save the centres as 8 x 8 images (needs matplotlib)")
    args = p.parse_args(argv)

    X, y = load_digits(return_X_y=True)
    n_seeds, n_init = (3, 2) if args.quick else (10, 10)
    print(f"digits: {X.shape[0]} images x {X.shape[1]} pixels, K = 10, {n_seeds} seeds, n_init {n_init}")
    fastrbf.kmeans(X[:100], 10, seed=0)  # warm-up: numba compiles on first use
    KMeans(10, n_init=1, random_state=0).fit(X[:100])  # and scikit-learn starts its thread pools

    rows = {"fastrbf.kmeans": [], "scikit-learn KMeans": []}
    best = None
    for seed in range(n_seeds):
        t0 = time.perf_counter()
        ours = fastrbf.kmeans(X, 10, n_init=n_init, seed=seed)
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's memory-leak notice on some platforms
            sk = KMeans(10, n_init=n_init, random_state=seed).fit(X)
        t2 = time.perf_counter()
        rows["fastrbf.kmeans"].append((adjusted_rand_score(y, ours.labels), ours.inertia, t1 - t0))
        rows["scikit-learn KMeans"].append((adjusted_rand_score(y, sk.labels_), sk.inertia_, t2 - t1))
        if best is None or ours.inertia < best.inertia:
            best = ours

    summary = {}
    for name, r in rows.items():
        ari, inertia, t = np.array(r).T
        summary[name] = dict(ari=ari.mean(), inertia=inertia.mean(), time=np.median(t))
        print(f"{name:20s} ARI {ari.mean():.3f} (min {ari.min():.3f})  inertia {inertia.mean():.6g}  "
              f"time {np.median(t) * 1e3:6.1f} ms per fit (median)")
    if args.centres:
        save_centres(args.centres, best.centers, best.labels, y)
        print(f"centres written to {args.centres}")
    return summary


if __name__ == "__main__":
    main()
