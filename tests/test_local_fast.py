"""The fast paths of local interpolation: the vectorised log, the null-space solver on
8 neighbourhoods per vector against the LU solver, lanes with singular neighbourhoods."""

import numpy as np
import pytest

import fastrbf
from fastrbf._jit import _decorators
from fastrbf._jit import local as jl
from fastrbf._jit.llvm.exp import flog
from fastrbf.kernels import KERNELS


@_decorators.jit
def _vlog(a, out):
    for i in range(a.shape[0]):
        out[i] = flog(a[i])


def _ulps(got, ref, dtype):
    return np.abs(got - ref) / np.spacing(np.abs(ref).astype(dtype))


def test_log_float64_within_one_ulp_over_the_whole_range(rng):
    bits = rng.integers(1, 0x7FF0000000000000, 1_000_000, dtype=np.int64)  # every finite positive, subnormals too
    x = np.concatenate([bits.view(np.float64), np.linspace(0.5, 2.0, 100_001), 1 + np.linspace(-1e-6, 1e-6, 1001),
                        [5e-324, 2.2250738585072014e-308, np.finfo(np.float64).max, 1.0]])
    out = np.empty_like(x)
    _vlog(x, out)
    ref = np.log(x.astype(np.longdouble))
    nz = ref != 0
    assert _ulps(out[nz], ref[nz], np.float64).max() <= 1.0
    assert out[-1] == 0.0


def test_log_float32_within_one_ulp(rng):
    bits = rng.integers(1, 0x7F800000, 1_000_000, dtype=np.int32)
    x = np.concatenate([bits.view(np.float32), np.linspace(0.5, 2.0, 100_001, dtype=np.float32),
                        np.array([1e-45, 1.1754944e-38, np.finfo(np.float32).max, 1.0], np.float32)])
    out = np.empty_like(x)
    _vlog(x, out)
    assert out.dtype == np.float32
    ref = np.log(x.astype(np.float64))
    nz = ref != 0
    assert _ulps(out[nz], ref[nz], np.float32).max() <= 1.0
    assert out[-1] == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_log_special_values(dtype):
    x = np.array([0.0, -0.0, np.inf, -1.0, -np.inf, np.nan], dtype=dtype)
    out = np.empty_like(x)
    _vlog(x, out)
    assert out[0] == -np.inf and out[1] == -np.inf and out[2] == np.inf
    assert np.isnan(out[3:]).all()


def _groups(X, Xq, k):
    idx, _ = fastrbf.knn(X, Xq, k)
    idx.sort(axis=1)
    nbr, inv = np.unique(idx, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable").astype(np.int64)
    starts = np.searchsorted(inv[order], np.arange(nbr.shape[0] + 1)).astype(np.int64)
    return starts, order, np.ascontiguousarray(nbr, dtype=np.int64)


def _both(X, Y, Xq, kernel, gamma, degree, k, alpha=None, n_threads=1):
    m = fastrbf.interpolate(X, Y, kernel=kernel, gamma=gamma, degree=degree, neighbors=k)
    starts, order, nbr = _groups(X, Xq, k)
    spec = KERNELS[kernel].spec(np.full(k, gamma), 0.0, 1)
    a = np.zeros(X.shape[0]) if alpha is None else alpha
    res = []
    for solver in (jl.local_solve, jl.local_solve_lanes):
        out = np.full((Xq.shape[0], Y.shape[1]), np.nan)
        status = np.full(nbr.shape[0], -1, dtype=np.int64)
        solver.run(n_threads, starts, order, nbr, X, Y, a, Xq, m.powers, spec.phi, spec.g, spec.c, spec.degree, out,
                   status)
        res.append((out, status))
    return res


@pytest.mark.parametrize("kernel, gamma, degree", [("thin_plate_spline", 1.0, 1), ("thin_plate_spline", 4.0, 2),
                                                   ("cubic", 1.0, 1), ("quintic", 1.0, 2), ("linear", 1.0, 0),
                                                   ("multiquadric", 16.0, 1), ("gaussian", 25.0, -1),
                                                   ("inverse_quadratic", 16.0, 0)])
@pytest.mark.parametrize("d", [1, 3])
def test_null_space_lanes_equal_lu(rng, kernel, gamma, degree, d):
    n = 60 if d == 1 else 300
    X = rng.random((n, d))
    Y = np.column_stack([np.sin(3 * X.sum(axis=1)), np.cos(2 * X[:, 0])])
    Xq = rng.random((61, d))  # the last group of lanes is partly padding
    if d == 1 and kernel not in ("thin_plate_spline", "cubic", "quintic", "linear"):
        gamma *= 144.0  # the neighbourhoods are narrower in one dimension: keep the systems well conditioned
    (lu, s_lu), (ns, s_ns) = _both(X, Y, Xq, kernel, gamma, degree, 15)
    assert not s_lu.any() and set(s_ns.tolist()) <= {0, 2}
    assert (s_ns == 2).mean() <= 0.1  # the rare lane whose Cholesky pivot is tiny goes to the LU
    starts, order, _ = _groups(X, Xq, 15)
    solved = np.concatenate([order[starts[u]:starts[u + 1]] for u in np.flatnonzero(s_ns == 0)])
    np.testing.assert_allclose(ns[solved], lu[solved], rtol=1e-10, atol=1e-10 * np.abs(lu).max())
    got = fastrbf.interpolate(X, Y, kernel=kernel, gamma=gamma, degree=degree, neighbors=15).predict(Xq)
    np.testing.assert_allclose(got, lu, rtol=1e-10, atol=1e-10 * np.abs(lu).max())


def test_singular_lanes_among_regular_ones(rng):
    # duplicates of some points without smoothing: those neighbourhoods are singular,
    # the others in the same groups of lanes are solved as usual
    X = rng.random((200, 2))
    X = np.vstack([X, X[:6]])
    Y = np.sin(4 * X)
    Xq = np.vstack([X[:6], rng.random((40, 2))])
    (lu, s_lu), (ns, s_ns) = _both(X, Y, Xq, "thin_plate_spline", 1.0, 1, 10)
    assert s_lu.any() and (~s_lu.astype(bool)).any()
    assert np.array_equal(s_ns == 2, s_lu == 1)  # the lanes leave exactly the singular ones to the LU
    starts, order, _ = _groups(X, Xq, 10)
    regular = np.concatenate([order[starts[u]:starts[u + 1]] for u in np.flatnonzero(s_lu == 0)])
    np.testing.assert_allclose(ns[regular], lu[regular], rtol=1e-10, atol=1e-10)


def test_lanes_do_not_depend_on_the_thread_count(rng):
    X = rng.random((2000, 3))
    Y = np.sin(3 * X)
    Xq = rng.random((700, 3))
    m = fastrbf.interpolate(X, Y, neighbors=30)
    with fastrbf.threads(1):
        one = m.predict(Xq)
    assert np.array_equal(one, m.predict(Xq, n_threads=2))


def test_a_singular_neighbourhood_in_the_lanes_raises(rng):
    X = np.vstack([rng.random((100, 3)), [[1.5, 1.5, 1.5], [1.5, 1.5, 1.5]]])  # a duplicate, away from the rest
    m = fastrbf.interpolate(X, np.sin(X[:, 0]), kernel="cubic", neighbors=12)
    Xq = np.vstack([rng.random((20, 3)), X[100:101]])
    with pytest.raises(ValueError, match=r"The local interpolation system of the neighbourhood of query point 20 "):
        m.predict(Xq)


def test_grouping_by_hash_falls_back_on_a_collision(monkeypatch):
    from fastrbf.models import local

    idx = np.array([[1, 2], [0, 3], [1, 2], [0, 3], [4, 5]], dtype=np.int64)

    def groups():
        nbr, order, starts = local.neighbourhoods(idx)
        assert np.array_equal(np.sort(order), np.arange(len(idx))) and starts[0] == 0 and starts[-1] == len(idx)
        return {tuple(nbr[u]): order[starts[u]:starts[u + 1]].tolist() for u in range(len(nbr))}

    expected = {(1, 2): [0, 2], (0, 3): [1, 3], (4, 5): [4]}
    assert groups() == expected
    monkeypatch.setattr(local, "_HASH", np.ones(8, dtype=np.int64))  # [1, 2] and [0, 3] now collide
    assert groups() == expected
    monkeypatch.setattr(local, "_CHECK_ROWS", 1)  # the check in blocks of one row
    assert groups() == expected


def test_lanes_evaluate_neighbourhoods_of_several_queries(rng):
    # queries repeated unevenly: the lanes evaluate round by round, r-th query of every lane
    X = rng.random((300, 3))
    Y = np.column_stack([np.sin(3 * X.sum(axis=1)), np.cos(2 * X[:, 0])])
    base = rng.random((20, 3))
    Xq = np.vstack([base, np.repeat(base[:5], [1, 2, 3, 9, 17], axis=0), base[7:8] + 1e-12])
    (lu, s_lu), (ns, s_ns) = _both(X, Y, Xq, "thin_plate_spline", 1.0, 1, 15)
    assert not s_lu.any() and not s_ns.any()
    starts, _, _ = _groups(X, Xq, 15)
    assert np.diff(starts).max() >= 18  # a neighbourhood with many queries among ones with a single query
    np.testing.assert_allclose(ns, lu, rtol=1e-10, atol=1e-10 * np.abs(lu).max())


def test_neighbourhoods_in_the_order_of_their_first_row():
    from fastrbf.models import local

    idx = np.array([[4, 5], [1, 2], [0, 3], [1, 2], [0, 3], [1, 2]], dtype=np.int64)
    nbr, order, starts = local.neighbourhoods(idx)
    assert nbr.tolist() == [[4, 5], [1, 2], [0, 3]]
    assert order.tolist() == [0, 1, 3, 5, 2, 4] and starts.tolist() == [0, 1, 4, 6]
    distinct = np.array([[3, 4], [0, 1], [2, 5]], dtype=np.int64)
    nbr, order, starts = local.neighbourhoods(distinct)
    assert nbr is distinct and order.tolist() == [0, 1, 2] and starts.tolist() == [0, 1, 2, 3]
