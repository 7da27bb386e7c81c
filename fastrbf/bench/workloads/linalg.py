"""The Cholesky workload: ``fastrbf.cholesky`` in place against LAPACK ``dpotrf``
alone, the hardware floor (:class:`PotrfFloor`, also the floor of the kernel ridge fit
in :mod:`fastrbf.bench.workloads.models`)."""

import time

import numpy as np

from fastrbf.kernels import gram

from ..harness import FASTRBF, FLOOR, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng


def workloads() -> list[Workload]:
    """The Cholesky workload."""
    return [_cholesky_workload()]


class PotrfFloor:
    """LAPACK ``dpotrf`` alone on a copy of the regularised Gram matrix; the copy is
    made untimed, so the figure is the factorisation only."""

    self_timed = True

    def __call__(self, a):
        from scipy.linalg import lapack

        np.copyto(a["work"], a["A"])
        t0 = time.perf_counter()
        _, info = lapack.dpotrf(a["work"].T, lower=0, clean=0, overwrite_a=1)
        t = time.perf_counter() - t0
        assert info == 0
        return t


class _CholeskyInPlace:
    """``fastrbf.cholesky(..., overwrite=True)`` on a copy of the matrix made untimed: the
    blocked factorisation (fixed blocks, the same bits on any thread count) and its
    symmetry check, against LAPACK ``dpotrf`` alone on the same matrix."""

    self_timed = True

    def __call__(self, a):
        from fastrbf.linalg import cholesky

        np.copyto(a["work"], a["A"])
        t0 = time.perf_counter()
        cholesky(a["work"], overwrite=True)
        return time.perf_counter() - t0


def _cholesky_workload():
    def setup(n):
        rng = seeded_rng()
        X = rng.standard_normal((n, 16))
        A = gram(X, gamma=1.0 / 16)
        A.flat[:: n + 1] += 1e-3
        return {"X": X, "A": A, "work": np.empty_like(A)}

    cs = [
        Contender("fastrbf cholesky (in place)", FASTRBF, _CholeskyInPlace()),
        Contender("LAPACK dpotrf alone", FLOOR, PotrfFloor()),
    ]
    return Workload("cholesky", setup, lambda a: a["A"].shape[0] ** 3 / 3, "flop/s", cs,
                    lambda a: f"n={a['A'].shape[0]}, Gaussian Gram + 1e-3 I, float64", sizes=(3000, 5500, 10000),
                    cost=lambda a: Cost(flops=a["A"].shape[0] ** 3 / 3, bytes_read=a["A"].nbytes / 2,
                                        bytes_written=a["A"].nbytes / 2))
