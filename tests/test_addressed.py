"""Kernels called through their addresses (fastrbf._jit.llvm.addressed): the call computes
what the kernel does, and a table entry compiled for other argument types is never
called (the call is skipped and reported)."""

import numpy as np
import pytest
from numba import njit, types

from fastrbf._jit.llvm.addressed import addressed, call, call_int, check, signature_key, table


def _axpy(y, a, x):
    for i in range(y.shape[0]):
        y[i] += a * x[i]


def _count_above(x, t):
    m = 0
    for i in range(x.shape[0]):
        m += x[i] > t
    return m


AXPY64 = types.void(types.float64[::1], types.float64, types.float64[::1])
AXPY32 = types.void(types.float32[::1], types.float64, types.float32[::1])
COUNT64 = types.int64(types.float64[::1], types.float64)


@njit
def _run_axpy(tab, y, a, x):
    call(tab, 0, (y, a, x))


@njit
def _run_count(tab, x, t):
    return call_int(tab, 0, (x, t))


def test_calls_compute_what_the_kernel_does():
    rng = np.random.default_rng(0)
    y, x = rng.standard_normal(37), rng.standard_normal(37)
    expected = y + 0.5 * x
    _run_axpy(table(addressed(_axpy, AXPY64)), y, 0.5, x)
    np.testing.assert_array_equal(y, expected)
    assert _run_count(table(addressed(_count_above, COUNT64)), x, 0.1) == int(np.sum(x > 0.1))


def test_entry_for_other_types_is_never_called():
    rng = np.random.default_rng(1)
    y, x = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    before = y.copy()
    tab = table(addressed(_axpy, AXPY64))  # compiled for float64 arrays, called with float32 ones
    _run_axpy(tab, y, 0.5, x)
    np.testing.assert_array_equal(y, before)
    with pytest.raises(RuntimeError, match="other types"):
        check(tab, ["axpy"])
    # the right entry works, and a table is checked per call
    tab32 = table(addressed(_axpy, AXPY32))
    _run_axpy(tab32, y, 0.5, x)
    check(tab32)
    np.testing.assert_array_equal(y, before + np.float32(0.5) * x)


def test_refused_int_call_returns_zero():
    x = np.arange(10, dtype=np.float32)
    tab = table(addressed(_count_above, COUNT64))
    assert _run_count(tab, x, 3.0) == 0
    with pytest.raises(RuntimeError):
        check(tab)


def test_signature_keys_differ_by_type_and_are_positive():
    keys = {signature_key(s) for s in (AXPY64, AXPY32, COUNT64)}
    assert len(keys) == 3 and min(keys) > 0
