"""The GPU backend without a GPU: the device tests (``tests/cuda``) under numba-cuda's
simulator, every device kernel compiled to PTX for sm_80 and sm_90 by the CUDA
compiler from PyPI, and the recognition of device arrays, which must not import
numba-cuda."""

import os
import pathlib
import subprocess
import sys

import numpy as np

import fastrbf
from fastrbf.cuda import is_device_array, on_device

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_device_tests_pass_under_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           str(ROOT / "tests" / "cuda")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout


def test_cpu_calls_never_import_numba_cuda():
    code = ("import sys, numpy as np, fastrbf\n"
            "X = np.ones((3, 2))\n"
            "fastrbf.sqdist(X); fastrbf.gram(X); fastrbf.knn(X, X, 1); fastrbf.lloyd_assign(X, X[:1])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('numba.cuda', 'numba_cuda'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


class _Interface:
    """A device array as CuPy or a torch CUDA tensor presents itself."""

    @property
    def __cuda_array_interface__(self):
        return {"shape": (2,), "typestr": "<f8", "data": (0, False), "version": 3}


class _HostTensor:
    """A torch CPU tensor: the attribute exists and raises."""

    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("Can't get __cuda_array_interface__ on non-CUDA tensor")

    def __dlpack_device__(self):
        return (1, 0)


class _DLPack:
    def __init__(self, kind):
        self.kind = kind

    def __dlpack_device__(self):
        return (self.kind, 0)


def test_device_arrays_are_recognised_by_their_interfaces():
    assert is_device_array(_Interface())
    assert is_device_array(_DLPack(2)) and is_device_array(_DLPack(13))  # CUDA, CUDA managed
    assert not is_device_array(_DLPack(3))  # pinned host memory
    assert not is_device_array(_DLPack(1)) and not is_device_array(_HostTensor())
    assert not any(is_device_array(x) for x in (np.ones(3), [1.0], 2.0, None, "gaussian"))
    assert on_device(np.ones(3), None, _Interface()) and not on_device(np.ones(3), 1.0)


def test_host_data_keeps_the_cpu_path():
    X = np.array([[0.0, 0.0], [3.0, 4.0]])
    assert type(fastrbf.sqdist(X)) is np.ndarray


# ---- PTX: every device kernel compiles for the GPUs we target ----


def _ptx_cases():
    import numba
    from numba import types

    from fastrbf import KERNELS
    from fastrbf._jit.cuda import cluster as jc
    from fastrbf._jit.cuda import neighbors as jn
    from fastrbf._jit.cuda import pairwise as jp
    from fastrbf._jit.cuda import reduce as jr
    from fastrbf._jit.cuda.phi import device_phi

    def arr(dt, nd):
        return types.Array(dt, nd, "A")

    cases = []
    for name in sorted(KERNELS):
        e = KERNELS[name]
        k = jp.tile_kernel(device_phi(e.code, np.float32), e.radial, np.float32)
        f32 = types.float32
        cases.append((f"tile-{name}-f32", k, (arr(f32, 2), arr(f32, 2), arr(f32, 1), f32, types.int64, arr(f32, 2)),
                      (9, 0), True))
    for dt, cc in ((np.float64, (8, 0)), (np.float32, (9, 0))):
        nb = numba.from_dtype(np.dtype(dt))
        tag = f"{np.dtype(dt).name}-sm{cc[0]}{cc[1]}"
        i8, f8 = types.int64, types.float64
        a1, a2 = arr(nb, 1), arr(nb, 2)
        phi = device_phi(KERNELS["matern52"].code, dt)
        for d in (3, 64):
            cases.append((f"matvec-d{d}-{tag}", jp.matvec_kernel(phi, True, dt, d),
                          (a2, a2, a2, a1, nb, i8, i8, arr(nb, 3)), cc, False))
            # the Nystroem passes: vectors and sums in float64 whatever the data's dtype
            cases.append((f"matvec-d{d}-v64-{tag}", jp.matvec_kernel(phi, True, dt, d, np.float64),
                          (a2, a2, arr(f8, 2), a1, nb, i8, i8, arr(f8, 3)), cc, False))
            cases.append((f"knn-d{d}-{tag}", jn.knn_kernel(dt, d, 10), (a2, a2, i8, arr(i8, 2), a2), cc, False))
            cases.append((f"assign-d{d}-{tag}", jn.knn_kernel(dt, d, 1), (a2, a2, i8, arr(i8, 2), a2), cc, False))
        cases += [
            (f"partials-{tag}", jc.partials_kernel(),
             (a2, arr(i8, 1), arr(f8, 1), arr(f8, 1), types.boolean, i8, arr(f8, 3), arr(f8, 2)), cc, False),
            (f"reduce-{tag}", jc.reduce_kernel(), (arr(f8, 3), arr(f8, 2), arr(f8, 2), arr(f8, 1), a2), cc, False),
            (f"potential-{tag}", jc.potential_kernel(dt), (a2, a2, arr(f8, 1), arr(f8, 1), arr(f8, 2)), cc, False),
            (f"lower-{tag}", jc.lower_kernel(dt), (a2, a2, i8, arr(f8, 1)), cc, False),
            (f"stats-{tag}", jr.stats_kernel(), (a2, arr(types.int32, 1), arr(f8, 1)), cc, False),
            (f"sums-{tag}", jr.sums_kernel(), (a1, arr(f8, 1), arr(f8, 1)), cc, False),
            (f"cast-{tag}", jr.cast_kernel(), (arr(i8, 2), a2), cc, False),
            (f"gather-{tag}", jr.gather_kernel(), (a2, arr(i8, 1), a2), cc, False),
            (f"scale-{tag}", jr.scale_kernel(), (a2, arr(f8, 1), a2), cc, False),
            (f"min-{tag}", jr.min_kernel(), (a1, arr(f8, 1)), cc, False),
            (f"changed-{tag}", jr.changed_kernel(), (arr(i8, 1), arr(i8, 1), arr(i8, 1)), cc, False),
            (f"positive-{tag}", jr.positive_kernel(), (arr(f8, 1), arr(i8, 1)), cc, False),
            (f"splits-{tag}", jp.splits_kernel(), (arr(f8, 3), a2), cc, False),
            (f"floor-{tag}", jp.floor_kernel(dt, 3), (i8, nb, a1), cc, False),
            (f"affine-{tag}", jr.affine_kernel(), (a2, arr(f8, 1), arr(f8, 1), a2), cc, False),
            (f"fill-{tag}", jr.fill_kernel(), (a1, nb), cc, False),
        ]
    return cases


def test_every_device_kernel_compiles_to_ptx_for_sm80_and_sm90(monkeypatch):
    import types

    from numba import cuda
    from numba.cuda import dispatcher

    target = {}
    if not cuda.is_available():
        # numba-cuda compiles a kernel's device functions for the current device's
        # compute capability; without a GPU, the capability the kernel is compiled for
        monkeypatch.setattr(dispatcher, "get_current_device",
                            lambda: types.SimpleNamespace(compute_capability=target["cc"]))
    failed, widened = [], []
    for name, kernel, sig, cc, single in _ptx_cases():
        target["cc"] = cc
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, fastmath=False)
        except Exception as exc:  # every kernel's failure, collected
            failed.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        assert f".target sm_{cc[0]}{cc[1]}" in ptx, name
        # float32 kernel functions compute in float32 (no conversion to double)
        if single and "cvt.f64.f32" in ptx:
            widened.append(name)
    assert failed == []
    assert widened == []
