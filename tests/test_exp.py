"""The vectorised exp used by the Gaussian-family kernels, and the edges of the vectorised log's
range reduction (its accuracy over the whole range: tests/test_local_fast.py)."""

import numpy as np
import pytest

from fastrbf._jit import _decorators
from fastrbf._jit.llvm.exp import fexp, flog, flog_pos


@_decorators.jit
def _vexp(a, out):
    for i in range(a.shape[0]):
        out[i] = fexp(a[i])


def test_float64_within_one_ulp_over_the_whole_range():
    x = np.concatenate([np.linspace(-745.5, 709.9, 400_001), np.linspace(-1, 1, 100_001), [0.0, -0.0]])
    out = np.empty_like(x)
    _vexp(x, out)
    with np.errstate(over="ignore", under="ignore"):
        ref = np.exp(x.astype(np.longdouble))
    normal = (ref > np.finfo(np.float64).tiny) & (ref < np.finfo(np.float64).max)
    rel = np.abs(out[normal] - ref[normal]) / ref[normal]
    assert rel.max() <= 1.5 * np.finfo(np.float64).eps
    # subnormal results underflow gradually, past the range they saturate like np.exp
    sub = ~normal & (ref < 1)
    assert np.all(np.abs(out[sub] - ref[sub]) <= 2 * 4.95e-324)
    assert np.all(np.isinf(out[ref >= np.finfo(np.float64).max]))
    assert np.all(out[x == 0] == 1.0)


def test_float32_within_one_ulp():
    x = np.linspace(-103.9, 88.7, 300_001).astype(np.float32)
    out = np.empty_like(x)
    _vexp(x, out)
    ref = np.exp(x.astype(np.float64))
    normal = ref > np.finfo(np.float32).tiny
    rel = np.abs(out[normal] - ref[normal]) / ref[normal]
    assert rel.max() <= 1.0 * np.finfo(np.float32).eps
    assert out.dtype == np.float32


@pytest.mark.parametrize("x", [-1e300, -800.0, 800.0, 1e300])
def test_saturation(x):
    out = np.empty(1)
    _vexp(np.array([x]), out)
    with np.errstate(over="ignore"):
        assert out[0] == np.exp(x)


@_decorators.jit
def _vlog(a, out):
    for i in range(a.shape[0]):
        out[i] = flog(a[i])


@_decorators.jit
def _vlog_pos(a, out):
    for i in range(a.shape[0]):
        out[i] = flog_pos(a[i])


def _vlogs(a, out, out_pos):
    _vlog(a, out)
    _vlog_pos(a, out_pos)


def _edges(dtype):
    """Powers of two, sqrt(2) times them (where the reduction moves to the next exponent)
    and the last subnormals and first normals, each with its neighbours."""
    info = np.finfo(dtype)
    e = np.arange(info.minexp - info.nmant, info.maxexp, dtype=np.float64)
    base = np.concatenate([np.exp2(e), np.sqrt(2) * np.exp2(e[:-1]), [info.smallest_normal, info.max]])
    x = base.astype(dtype)
    x = x[np.isfinite(x) & (x > 0)]
    near = [np.nextafter(x, info.max), np.nextafter(x, dtype(0))]
    step = [info.smallest_subnormal * dtype(i) for i in range(1, 4)]
    x = np.unique(np.concatenate([x, *near, info.smallest_normal - np.array(step, dtype), np.array(step, dtype)]))
    return x[x > 0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_within_one_ulp_at_the_edges_of_its_range_reduction(dtype):
    x = _edges(dtype)
    out, out_pos = np.empty_like(x), np.empty_like(x)
    _vlogs(x, out, out_pos)
    ref = np.log(x.astype(np.longdouble))
    nz = ref != 0
    ulps = np.abs(out[nz] - ref[nz]) / np.spacing(np.abs(ref[nz]).astype(dtype))
    assert ulps.max() <= 1.0
    assert out[x == 1][0] == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_of_positive_numbers_is_flog_without_the_special_values(rng, dtype):
    bits = rng.integers(1, 0x7FF0000000000000 if dtype == np.float64 else 0x7F800000, 200_000,
                        dtype=np.int64 if dtype == np.float64 else np.int32)
    x = np.concatenate([bits.view(dtype), _edges(dtype)])
    out, out_pos = np.empty_like(x), np.empty_like(x)
    _vlogs(x, out, out_pos)
    assert out_pos.dtype == dtype and np.array_equal(out_pos, out)
    # 0 and inf give finite numbers, inf a positive one: x log(x) / 2 is still inf there
    x = np.array([0.0, np.inf], dtype)
    _vlogs(x, out[:2], out_pos[:2])
    assert np.isfinite(out_pos[:2]).all() and out_pos[1] > 0
