"""The GPU workloads: fastrbf's device kernels on data held by CuPy (numba's device
arrays without it), beside CuPy's own dense formulation and the GPU peers, in the same
run.  Without a GPU (or without numba-cuda) every row says ``no GPU`` and nothing is
timed: the rows stay in the report so that a run on a GPU machine fills them.

- ``gpu-gram-matvec``: ``K(X, X) @ v``, gaussian, d = 3, float32 (full: 1e6 x 1e6),
  against pykeops's ``LazyTensor`` on the same GPU and CuPy's blocked ``exp(-g D) @ v``,
  with the device's floor: the same arithmetic on values made in registers (no memory
  traffic: the FMA and exp throughput the product cannot beat).
- ``gpu-lloyd``: one Lloyd iteration (assignment and update), 1e6 x 32, K = 256, float32.
- ``gpu-knn``: 10 nearest of 1e5 queries among 1e6 points, d = 16, float32.
- ``gpu-krr-large``: kernel ridge (``solver="nystrom-pcg"``, M = 2000 uniform landmarks)
  of 1e6 x 16, float32: the fit, the CG's m x m algebra on the host included.
"""

import numpy as np

from ..harness import FASTRBF, FLOOR, Contender, Workload
from .common import seeded_rng
from .peers import optional_peer

NO_GPU = "no GPU"


def gpu_present() -> bool:
    """Whether a real GPU runs the device kernels here (numba-cuda's simulator does not count).

    Examples
    --------
    >>> isinstance(gpu_present(), bool)
    True
    """
    import os

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    from fastrbf.cuda import is_available

    return is_available()


def _device(a):
    """``a`` on the GPU: a CuPy array when CuPy is installed, else numba's."""
    try:
        import cupy

        return cupy.asarray(a)
    except ImportError:
        from numba import cuda

        return cuda.to_device(a)


def _sync(x):
    from numba import cuda

    cuda.synchronize()
    return x


def _rows(present, contenders):
    """The contenders, each marked ``no GPU`` when there is none."""
    if present:
        return contenders
    return [Contender(c.label, c.kind, c.fn, full=c.full, missing=NO_GPU, note=NO_GPU) for c in contenders]


def _empty(d):
    return {"X": np.empty((0, d), dtype=np.float32), "gpu": False}


def workloads() -> list[Workload]:
    """The GPU workloads (rows that say ``no GPU`` where there is none)."""
    present = gpu_present()
    return [_matvec(present), _lloyd(present), _knn(present), _krr(present)]


def _matvec(present):
    d, gamma = 3, 0.5

    def setup(n):
        if not present:
            return _empty(d)
        rng = seeded_rng()
        X = rng.standard_normal((n, d)).astype(np.float32)
        v = rng.standard_normal(n).astype(np.float32)
        from numba import cuda

        return {"X": X, "Xd": _device(X), "vd": _device(v), "floor_out": cuda.device_array(n, np.float32), "gpu": True}

    def ours(a):
        from fastrbf import gram_matvec

        return _sync(gram_matvec(a["Xd"], a["Xd"], a["vd"], gamma=gamma))

    def cupy_dense(a):
        import cupy

        X, v = a["Xd"], a["vd"]
        out = cupy.empty(X.shape[0], dtype=cupy.float32)
        sq = (X * X).sum(axis=1)
        for lo in range(0, X.shape[0], 4096):
            Xb = X[lo:lo + 4096]
            D = cupy.maximum(sq[lo:lo + 4096, None] + sq[None, :] - 2 * Xb @ X.T, 0)
            out[lo:lo + 4096] = cupy.exp(-gamma * D) @ v
        return _sync(out)

    def floor(a):
        from fastrbf._jit.cuda.pairwise import floor_kernel
        from fastrbf._jit.cuda.target import ROWS, blocks

        n = a["X"].shape[0]
        out = a["floor_out"]
        floor_kernel(np.float32, d)[blocks(n, ROWS), ROWS](n, np.float32(gamma), out)
        return _sync(out)

    def keops(a):
        import torch
        from pykeops.torch import LazyTensor

        X = torch.as_tensor(a["Xd"], device="cuda")
        v = torch.as_tensor(a["vd"], device="cuda")[:, None]
        xi, xj = LazyTensor(X[:, None, :]), LazyTensor(X[None, :, :])
        out = ((-gamma * ((xi - xj) ** 2).sum(-1)).exp() @ v)
        torch.cuda.synchronize()
        return out

    cs = _rows(present, [
        Contender("fastrbf (device)", FASTRBF, ours),
        Contender("device floor: the same arithmetic from registers", FLOOR, floor),
        optional_peer("CuPy blocked exp(-g D) @ v", "cupy", cupy_dense, package="cupy"),
        optional_peer("pykeops GPU LazyTensor", "pykeops", keops, package="pykeops", compiles="nvcc"),
    ])
    return Workload("gpu-gram-matvec/float32", setup, lambda a: float(a["X"].shape[0]) ** 2, "entries/s", cs,
                    lambda a: f"K({a['X'].shape[0]}x{d}) @ v, gaussian" if a["gpu"] else NO_GPU,
                    sizes=(100000, 1000000))


def _lloyd(present):
    d, K = 32, 256

    def setup(n):
        if not present:
            return _empty(d)
        rng = seeded_rng()
        X = rng.standard_normal((n, d)).astype(np.float32)
        C = X[rng.choice(n, K, replace=False)].copy()
        return {"X": X, "Xd": _device(X), "Cd": _device(C), "gpu": True}

    def ours(a):
        from fastrbf import lloyd_assign, lloyd_update

        labels, _ = lloyd_assign(a["Xd"], a["Cd"])
        return _sync(lloyd_update(a["Xd"], labels, K))

    cs = _rows(present, [Contender("fastrbf (device), one iteration", FASTRBF, ours)])
    return Workload("gpu-lloyd/float32", setup, lambda a: float(a["X"].shape[0]) * K, "point-centres/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, K={K}, one iteration" if a["gpu"] else NO_GPU,
                    sizes=(100000, 1000000))


def _knn(present):
    d, k = 16, 10

    def setup(size):
        if not present:
            return _empty(d)
        n, m = size
        rng = seeded_rng()
        X = rng.standard_normal((n, d)).astype(np.float32)
        Q = rng.standard_normal((m, d)).astype(np.float32)
        return {"X": X, "Xd": _device(X), "Qd": _device(Q), "gpu": True}

    def ours(a):
        from fastrbf import knn

        return _sync(knn(a["Xd"], a["Qd"], k))

    cs = _rows(present, [Contender("fastrbf (device) brute force", FASTRBF, ours)])
    return Workload("gpu-knn/float32", setup, lambda a: float(a["X"].shape[0]) * (a["Qd"].shape[0] if a["gpu"] else 0),
                    "pairs/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d} points, {a['Qd'].shape[0]} queries, k={k}" if a["gpu"] else NO_GPU,
                    sizes=((100000, 10000), (1000000, 100000)))


def _krr(present):
    d, M = 16, 2000

    def setup(n):
        if not present:
            return _empty(d)
        rng = seeded_rng()
        X = rng.standard_normal((n, d)).astype(np.float32)
        y = (np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)).astype(np.float32)
        return {"X": X, "Xd": _device(X), "yd": _device(y), "gpu": True}

    def ours(a):
        from fastrbf import kernel_ridge

        return kernel_ridge(a["Xd"], a["yd"], gamma=1.0 / d, alpha=1e-3, solver="nystrom-pcg", n_landmarks=M,
                            landmarks="uniform", seed=0)

    cs = _rows(present, [Contender("fastrbf (device) kernel_ridge nystrom-pcg", FASTRBF, ours)])
    return Workload("gpu-krr-large", setup, lambda a: float(a["X"].shape[0]), "rows/s", cs,
                    lambda a: f"{a['X'].shape[0]}x{d}, M={M}, uniform landmarks" if a["gpu"] else NO_GPU,
                    sizes=(100000, 1000000))
