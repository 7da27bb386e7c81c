"""The vectorised exp used by the Gaussian-family kernels."""

import numpy as np
import pytest

from fastrbf._jit import _decorators
from fastrbf._jit.exp import fexp


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
