"""Squared-distance workloads: ``sqdist`` against the NumPy reference, the norm trick,
scikit-learn and SciPy at low (d=16, float64 and float32), high (d=256) and many (d=1024)
dimensions.  The low-d rows are bound by writing the output, the others by the GEMM
flops."""

import numpy as np

from fastrbf import reference
from fastrbf.distances import sqdist

from ..harness import FASTRBF, NUMPY, PEER, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import


def workloads() -> list[Workload]:
    """The squared-distance workloads, in the order of the report."""
    return [
        _sqdist_workload("sqdist-lowd/float64", ((2500, 2000), (7000, 2000), (20000, 2000)), 16, np.float64),
        _sqdist_workload("sqdist-lowd/float32", ((2500, 2000), (7000, 2000), (20000, 2000)), 16, np.float32),
        _sqdist_workload("sqdist-highd/float64", ((700, 700), (2600, 2600), (10000, 10000)), 256, np.float64),
        # many features: the certified path's GEMMs by chunks of features (its bound no
        # longer grows with d, so typical entries need no recomputation)
        _sqdist_workload("sqdist-manyd/float64", ((700, 700), (2000, 2000), (4000, 4000)), 1024, np.float64),
    ]


def _sqdist_workload(name, sizes, d, dtype):
    def setup(size):
        rng = seeded_rng()
        nn, mm = size
        X = rng.standard_normal((nn, d)).astype(dtype)
        Y = rng.standard_normal((mm, d)).astype(dtype)
        return {"X": X, "Y": Y, "out": np.empty((nn, mm), dtype=dtype)}

    cs = [
        Contender("fastrbf", FASTRBF, lambda a: sqdist(a["X"], a["Y"])),
        Contender("fastrbf out=", FASTRBF, lambda a: sqdist(a["X"], a["Y"], out=a["out"])),
        Contender("numpy reference", NUMPY, lambda a: reference.sqdist(a["X"], a["Y"]), full=d <= 64),
        Contender("numpy norm trick", PEER, lambda a: _norm_trick(a["X"], a["Y"])),
    ]
    skm = try_import("sklearn.metrics.pairwise")
    if skm is not None:
        cs.append(Contender("scikit-learn", PEER, lambda a: skm.euclidean_distances(a["X"], a["Y"], squared=True)))
    ssd = try_import("scipy.spatial.distance")
    if ssd is not None:
        # ~14 s per call at 10000x256 vs 10000 on 2 cores: slow, but under the ~30 s cut
        cs.append(Contender("scipy cdist", PEER, lambda a: ssd.cdist(a["X"], a["Y"], "sqeuclidean")))
    return Workload(name, setup, lambda a: a["X"].shape[0] * a["Y"].shape[0], "pairs/s", cs, _shape_xy, sizes=sizes,
                    cost=_sqdist_cost)


def _sqdist_cost(a):
    """The GEMM form's flops (2 n m d), the inputs read and the n x m output written once."""
    (n, d), m, size = a["X"].shape, a["Y"].shape[0], a["X"].itemsize
    return Cost(flops=2.0 * n * m * d, bytes_read=(n + m) * d * size, bytes_written=n * m * size)


def _norm_trick(X, Y):
    return (X * X).sum(1)[:, None] + (Y * Y).sum(1)[None, :] - 2 * (X @ Y.T)


def _shape_xy(a):
    return f"{a['X'].shape[0]}x{a['X'].shape[1]} vs {a['Y'].shape[0]}, {a['X'].dtype}"
