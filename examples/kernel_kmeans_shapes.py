"""Kernel k-means on two concentric rings and on two moons, beside plain k-means.

Plain k-means cuts the plane into convex cells, so it cannot separate a ring from the
ring around it; ``fastrbf.kernel_kmeans`` runs the same iterations in the feature space
of a Gaussian kernel, where the rings are apart.  The adjusted Rand index (ARI) measures
how well the clusters match the true shapes (1 = perfectly, 0 = chance).

On the moons the kernel k-means objective has local minima: the split into the two moons
has a lower objective than what Lloyd's iterations reach from most k-means++ starts
(k-means++ seeding and more starts, ``n_init``, are the remedy, not a guarantee).  The
script prints, for each data set, the lowest objective over the starts with its ARI, and
the objective of the true split.

Run::

    python examples/kernel_kmeans_shapes.py                          # 20 starts
    python examples/kernel_kmeans_shapes.py --quick --picture s.png  # 5 starts

``--picture PATH`` draws the clusters of both methods on both data sets (needs
matplotlib).
"""

import argparse

from sklearn.datasets import make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

import fastrbf

DATA = {
    "rings": (lambda: make_circles(600, factor=0.3, noise=0.05, random_state=0), 5.0),
    "moons": (lambda: make_moons(600, noise=0.05, random_state=0), 10.0),
}


def save_picture(path, panels):
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("The picture needs matplotlib: pip install matplotlib (or fastrbf[plot]), "
                         "or leave out --picture.") from None
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(7, 6.4), constrained_layout=True)
    for ax, (title, X, labels) in zip(axes.flat, panels, strict=True):
        ax.scatter(X[:, 0], X[:, 1], c=labels, s=6, cmap="coolwarm")
        ax.set_title(title, fontsize=9)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer starts (seconds)")
    p.add_argument("--picture", metavar="PATH", help="draw the clusters (needs matplotlib)")
    args = p.parse_args(argv)
    n_init = 5 if args.quick else 20

    panels = []
    summary = {}
    for name, (make, gamma) in DATA.items():
        X, y = make()
        km = fastrbf.kmeans(X, 2, n_init=n_init, seed=0)
        kk = fastrbf.kernel_kmeans(X, 2, gamma=gamma, n_init=n_init, seed=0)
        truth = fastrbf.kernel_kmeans_objective(X, y, gamma=gamma)
        summary[name] = dict(kmeans=adjusted_rand_score(y, km.labels), kernel=adjusted_rand_score(y, kk.labels),
                             objective=kk.inertia, truth=truth)
        print(f"{name}: kmeans ARI {summary[name]['kmeans']:.3f}; kernel_kmeans (gamma {gamma:g}, {n_init} starts) "
              f"ARI {summary[name]['kernel']:.3f}, objective {kk.inertia:.4f}; the true split's objective "
              f"{truth:.4f}")
        panels += [(f"{name}: kmeans, ARI {summary[name]['kmeans']:.2f}", X, km.labels),
                   (f"{name}: kernel_kmeans, ARI {summary[name]['kernel']:.2f}", X, kk.labels)]
    if args.picture:
        save_picture(args.picture, panels)
        print(f"picture written to {args.picture}")
    return summary


if __name__ == "__main__":
    main()
