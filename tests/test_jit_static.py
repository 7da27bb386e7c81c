"""Kernels compiled without reference counting (``_decorators.jit_static``): they
compute on the caller's arrays and views of them, an allocation does not compile, and
their code carries no reference counts."""

import numpy as np
import pytest
from numba.core.errors import TypingError
from numpy.testing import assert_array_equal

from fastrbf._jit._decorators import jit_static


def _views(x, lo, hi, out):
    v = x[lo:hi]
    o = out[lo:hi]
    for i in range(v.shape[0]):
        o[i] = v[i] + 1.0


_add_on_views = jit_static(_views)


@jit_static
def _allocates(x):
    y = np.empty(3)
    x[0] = y[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_computes_on_the_callers_arrays_and_views(dtype):
    x = np.arange(7, dtype=dtype)
    out = np.zeros(7, dtype=dtype)
    _add_on_views(x, 2, 5, out)
    want = np.zeros(7, dtype=dtype)
    want[2:5] = x[2:5] + 1
    assert_array_equal(out, want)
    assert_array_equal(x, np.arange(7, dtype=dtype))


def test_an_allocation_does_not_compile():
    with pytest.raises(TypingError):
        _allocates(np.zeros(3))


def test_code_counts_no_references(monkeypatch):
    # compiled anew (no cache: numba does not show the code of cached kernels); the
    # same function with reference counting counts the views' references
    monkeypatch.setenv("FASTRBF_CACHE", "0")
    from fastrbf._jit._decorators import jit

    args = (np.zeros(5), 1, 3, np.zeros(5))
    counted, static = jit(_views), jit_static(_views)
    counted(*args)
    static(*args)
    assert "NRT_decref" in counted.inspect_llvm(counted.signatures[0])
    code = static.inspect_llvm(static.signatures[0])
    assert "_views" in code and "NRT_" not in code


def test_kmeans_loop_and_seeding_are_static():
    from fastrbf._jit.cluster import bounded_fit, seeding

    for kernel in (bounded_fit.fit_loop, seeding.seed_pass):
        assert kernel.targetoptions["_nrt"] is False, kernel
