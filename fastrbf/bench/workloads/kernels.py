"""Gram-matrix workloads: the Gaussian Gram matrix of one set (against the NumPy
reference and scikit-learn's ``rbf_kernel``), the Matern-5/2 one (against scikit-learn's
``Matern``) and ``gram_matvec`` (against building the matrix, then multiplying, and
pykeops's on-the-fly kernel sum on the CPU).  Each also times the same kernel written as
a user kernel (:mod:`fastrbf.user_kernels`), so that the cost of a user kernel against
the built-in one is a same-run ratio.  Their essential cost counts the exps: half the
matrix for the symmetric Gram matrix (written whole), every entry for ``gram_matvec``
(nothing written but the result)."""

import math

import numpy as np

from fastrbf import reference
from fastrbf.kernels import gram, gram_matvec

from ..harness import FASTRBF, NUMPY, PEER, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import keops_gaussian_matvec, optional_peer


def workloads() -> list[Workload]:
    """The Gram-matrix workloads, in the order of the report."""
    return [_gram_workload(), _matern_workload(), _matvec_workload()]


_USER: dict = {}


def user_kernels():
    """The built-in Gaussian and Matern-5/2 kernels written as user kernels (defined on
    first use: defining one compiles it)."""
    if not _USER:
        from fastrbf.user_kernels import define_kernel, exp

        def bench_gaussian(s):
            return exp(-s)

        def bench_matern52(s):
            t = math.sqrt(5.0 * s)
            return (1.0 + t + t * t / 3.0) * exp(-t)

        _USER["gaussian"] = define_kernel(bench_gaussian, positive_definite=True)
        _USER["matern52"] = define_kernel(bench_matern52, positive_definite=True)
    return _USER


def _gram_workload():
    def setup(n):
        X = seeded_rng().standard_normal((n, 16))
        return {"X": X, "out": np.empty((n, n)), "user": user_kernels()["gaussian"]}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram(a["X"], gamma=0.5)),
        Contender("fastrbf out=", FASTRBF, lambda a: gram(a["X"], gamma=0.5, out=a["out"])),
        Contender("fastrbf user kernel", FASTRBF, lambda a: gram(a["X"], kernel=a["user"], gamma=0.5)),
        Contender("numpy reference", NUMPY, lambda a: reference.gram(a["X"], gamma=0.5)),
    ]
    skm = try_import("sklearn.metrics.pairwise")
    if skm is not None:
        cs.append(Contender("scikit-learn rbf_kernel", PEER, lambda a: skm.rbf_kernel(a["X"], gamma=0.5)))
    return Workload("gram-gaussian", setup, lambda a: a["X"].shape[0] ** 2, "entries/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} self, gamma 0.5", sizes=(2000, 4500, 10000),
                    cost=_gram_cost)


def _matern_workload():
    def setup(n):
        return {"X": seeded_rng().standard_normal((n, 16)), "user": user_kernels()["matern52"]}

    # gamma 0.25 = 1 / length_scale**2 with scikit-learn's length_scale 2
    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram(a["X"], kernel="matern52", gamma=0.25)),
        Contender("fastrbf user kernel", FASTRBF, lambda a: gram(a["X"], kernel=a["user"], gamma=0.25)),
    ]
    skk = try_import("sklearn.gaussian_process.kernels")
    if skk is not None:
        cs.append(Contender("scikit-learn Matern(nu=2.5)", PEER, lambda a: skk.Matern(length_scale=2.0, nu=2.5)(a["X"])))
    return Workload("gram-matern52", setup, lambda a: a["X"].shape[0] ** 2, "entries/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{a['X'].shape[1]} self, length scale 2", sizes=(2000, 8000),
                    cost=_gram_cost)


def _gram_cost(a):
    (n, d), size = a["X"].shape, a["X"].itemsize
    return Cost(flops=float(n) * n * d, bytes_read=n * d * size, bytes_written=n * n * size, exps=n * (n - 1) / 2)


def _matvec_cost(a):
    (n, d), m = a["X"].shape, a["Y"].shape[0]
    return Cost(flops=2.0 * n * m * (d + 1), bytes_read=((n + m) * d + m) * 8, bytes_written=n * 8, exps=float(n) * m)


def _matvec_workload():
    def setup(n):
        rng = seeded_rng()
        return {"X": rng.standard_normal((n, 16)), "Y": rng.standard_normal((2000, 16)), "v": rng.standard_normal(2000),
                "user": user_kernels()["gaussian"]}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
        Contender("fastrbf user kernel", FASTRBF, lambda a: gram_matvec(a["X"], a["Y"], a["v"], kernel=a["user"], gamma=0.5)),
        Contender("numpy build-then-multiply", NUMPY, lambda a: reference.gram_matvec(a["X"], a["Y"], a["v"], gamma=0.5)),
        optional_peer("pykeops CPU LazyTensor", "pykeops", package="pykeops", compiles="g++",
                      fn=lambda a: keops_gaussian_matvec(a["X"], a["Y"], a["v"], 0.5)),
    ]
    return Workload("gram-matvec", setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "entries/s", cs,
                    lambda a: f"K({a['X'].shape[0]}x16, {a['Y'].shape[0]}x16) @ v", sizes=(2500, 16000, 100000),
                    cost=_matvec_cost)
