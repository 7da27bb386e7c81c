"""Kernel-approximation workloads: the random Fourier feature transform against the
NumPy reference and scikit-learn's ``RBFSampler``.  Its essential cost is the projection's
GEMM flops and the features written; the cosines are not counted (no floor measures
them), so the floor is a lower bound that the cosines can keep out of reach."""

import numpy as np

from fastrbf import reference
from fastrbf.approx import random_fourier

from ..harness import FASTRBF, NUMPY, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import optional_peer


def workloads() -> list[Workload]:
    """The kernel-approximation workloads."""
    return [_rff_workload()]


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
