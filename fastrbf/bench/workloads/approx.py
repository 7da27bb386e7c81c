"""Kernel-approximation workloads: the random Fourier feature transform against the
NumPy reference and scikit-learn's ``RBFSampler``.  Its essential cost is the projection's
GEMM flops and the features written; the cosines are not counted (no floor measures
them), so the floor is a lower bound that the cosines can keep out of reach.

``landmarks``: the time to choose M landmarks uniformly, by k-means (as
``landmarks="kmeans"``) and by randomly pivoted Cholesky (``"rpcholesky"``), side by side;
the accuracy note gives each choice's relative trace error ``tr(K - K_nm K_mm^-1 K_mn) /
tr K`` over all N points and the test RMSE of ``kernel_ridge(solver="nystrom")`` on it."""

import functools

import numpy as np

from fastrbf import reference
from fastrbf.approx import nystroem, random_fourier
from fastrbf.models import falkon
from fastrbf.models.ridge import kernel_ridge

from ..harness import FASTRBF, NUMPY, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import optional_peer


def workloads() -> list[Workload]:
    """The kernel-approximation workloads."""
    return [_rff_workload(), _landmarks_workload()]


def _landmarks_workload():
    # the krr-large function on 8 standard normal coordinates; Gaussian kernel, gamma 1/16
    gamma, lam, noise, d = 1.0 / 16, 1e-5, 0.3, 8
    kernel = {"kernel": "gaussian", "gamma": gamma, "degree": 3, "coef0": 1.0}

    def setup(size):
        n, m = size
        rng = seeded_rng()
        X = rng.standard_normal((n, d))
        Xt = rng.standard_normal((5000, d))
        f = lambda Z: np.sin(Z[:, 0]) + 0.5 * Z[:, 1] * Z[:, 2]  # noqa: E731
        return {"X": X, "y": f(X) + noise * rng.standard_normal(n), "Xt": Xt, "yt": f(Xt) + noise * rng.standard_normal(5000),
                "m": m}

    def choose(a, how):
        a[how] = falkon.landmarks(a["X"], a["m"], how, 0, None, kernel=kernel)
        return a[how]

    def accuracy(a):
        X, n = a["X"], a["X"].shape[0]
        parts = []
        for how in ("uniform", "kmeans", "rpcholesky"):
            L = a.get(how)
            if L is None:
                L = choose(a, how)
            ny = nystroem(X, L, gamma=gamma)
            kept = sum(float(np.sum(Z * Z)) for Z in (ny.transform(X[r:r + 10000]) for r in range(0, n, 10000)))
            model = kernel_ridge(X, a["y"], gamma=gamma, alpha=lam * n, solver="nystrom", landmarks=L)
            rmse = float(np.sqrt(np.mean((model.predict(a["Xt"]) - a["yt"]) ** 2)))
            parts.append(f"{how}: trace error {(n - kept) / n:.3e}, KRR test RMSE {rmse:.4f}")
        return "; ".join(parts)

    cs = [Contender(f"fastrbf landmarks={how!r}", FASTRBF, functools.partial(_choose_with, choose, how))
          for how in ("rpcholesky", "kmeans", "uniform")]
    return Workload("landmarks", setup, lambda a: a["m"], "landmarks/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d={d}, M={a['m']}, gaussian gamma {gamma:g}", accuracy,
                    sizes=((20000, 300), (100000, 1000)))


def _choose_with(choose, how, a):
    return choose(a, how)


def _rff_workload():
    gamma, d = 1.0 / 16, 16

    def setup(size):
        n, D = size
        X = seeded_rng().standard_normal((n, d))
        data = {"X": X, "rff": random_fourier(d, D, gamma=gamma, seed=0), "out": np.empty((n, D))}
        skk = try_import("sklearn.kernel_approximation")
        if skk is not None:  # fitted outside the timed call: only transform is timed
            data["sk"] = skk.RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X[:1])
        return data

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: a["rff"].transform(a["X"])),
        Contender("fastrbf out=", FASTRBF, lambda a: a["rff"].transform(a["X"], out=a["out"])),
        Contender("numpy reference", NUMPY,
                  lambda a: reference.random_fourier_transform(a["X"], a["rff"].weights, a["rff"].offset)),
    ]
    cs.append(optional_peer("scikit-learn RBFSampler.transform", "sklearn.kernel_approximation",
                            lambda a: a["sk"].transform(a["X"]), package="sklearn"))
    return Workload("rff", setup, lambda a: a["X"].shape[0] * a["rff"].n_components, "features/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} -> {a['rff'].n_components}, float64",
                    sizes=((20000, 500), (45000, 1000), (100000, 2000)),
                    cost=lambda a: Cost(flops=2.0 * a["X"].size * a["rff"].n_components, bytes_read=a["X"].nbytes,
                                        bytes_written=a["X"].shape[0] * a["rff"].n_components * 8.0))
