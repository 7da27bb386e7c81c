"""The register-blocked micro-kernels (fastrbf._jit.llvm.micro) give bitwise the values of
``chunk_row``, whatever the shape, the offsets, the vector template and the thread count,
and so do the functions built on them (sqdist, gram, knn, the direct Lloyd assignment)."""

import os
import platform
import subprocess
import sys

import numba
import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastrbf
from fastrbf import _pairwise
from fastrbf._jit import tiles
from fastrbf._jit.llvm import micro
from fastrbf.cluster._kmeans import lloyd_assign
from fastrbf.neighbors._knn import knn

DTYPES = [np.float64, np.float32]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def chunk_rows(X, Yt, j0, j1, dot):
    """The oracle: row by row chunk_row (the arithmetic of every pairwise kernel)."""
    o = np.empty((X.shape[0], j1 - j0), dtype=X.dtype)
    for i in range(X.shape[0]):
        tiles.chunk_row(X, np.int64(i), Yt, np.int64(j0), np.int64(j1), np.bool_(dot), o[i])
    return o


def blocks(X, Yt, i0, i1, j0, j1, dot, oi, oj):
    """fill_block into a larger output at offsets (oi, oj); the rest must stay untouched."""
    out = np.full((oi + i1 - i0 + 3, oj + j1 - j0 + 5), 7.0, dtype=X.dtype)
    z = np.int64
    tiles.fill_block(X, z(i0), z(i1), Yt, z(j0), z(j1), np.bool_(dot), out, z(oi), z(oj))
    keep = np.ones(out.shape, dtype=bool)
    keep[oi : oi + i1 - i0, oj : oj + j1 - j0] = False
    assert (out[keep] == 7.0).all()
    return out[oi : oi + i1 - i0, oj : oj + j1 - j0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dot", [False, True])
def test_blocks_match_chunk_row_bitwise(rng, dtype, dot):
    mr, nr = micro.block_shape()
    nb = nr * micro.lanes(micro.types.float64 if dtype == np.float64 else micro.types.float32)
    for d in range(1, 41):  # every tail of the features taken four at a time
        n, m = 2 * mr + 3, 3 * nb + 7
        X = (rng.standard_normal((n, d)) * 3 + 5).astype(dtype)
        Yt = np.ascontiguousarray((rng.standard_normal((m, d)) * 3 + 5).astype(dtype).T)
        for i0, i1, j0, j1, oi, oj in [(0, n, 0, m, 0, 0), (1, n - 1, 3, m - 2, 2, 1), (2, 3, 5, 5 + nb, 0, 9),
                                       (0, mr, 1, 1 + nb, 1, 0), (3, n, 0, nb - 1, 0, 0)]:
            got = blocks(X, Yt, i0, i1, j0, j1, dot, oi, oj)
            assert_array_equal(bits(got), bits(chunk_rows(X[i0:i1], Yt, j0, j1, dot)), err_msg=f"d={d}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_identical_rows_exact_zero_and_symmetric(rng, dtype):
    X = (rng.standard_normal((37, 13)) + 100).astype(dtype)
    D = fastrbf.sqdist(X)
    assert (np.diag(D) == 0).all()
    assert_array_equal(bits(D), bits(D.T.copy()))
    assert_array_equal(bits(D), bits(chunk_rows(X, np.ascontiguousarray(X.T), 0, 37, False)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (5, 3, 2), (67, 1001, 7), (130, 51, 33)])
def test_sqdist_gram_equal_chunk_row_and_threads(rng, dtype, n, m, d):
    X = (rng.standard_normal((n, d)) + 2).astype(dtype)
    Y = (rng.standard_normal((m, d)) - 1).astype(dtype)
    D1 = fastrbf.sqdist(X, Y, n_threads=1)
    D2 = fastrbf.sqdist(X, Y, n_threads=2)
    assert not _pairwise.use_gemm(np.dtype(dtype), d)
    assert_array_equal(bits(D1), bits(chunk_rows(X, np.ascontiguousarray(Y.T), 0, m, False)))
    assert_array_equal(bits(D1), bits(D2))
    S1 = fastrbf.sqdist(X, n_threads=1)
    assert_array_equal(bits(S1), bits(fastrbf.sqdist(X, n_threads=2)))
    assert_array_equal(bits(S1), bits(chunk_rows(X, np.ascontiguousarray(X.T), 0, n, False)))
    K1 = fastrbf.gram(X, Y, gamma=0.3, n_threads=1)
    assert_array_equal(bits(K1), bits(fastrbf.gram(X, Y, gamma=0.3, n_threads=2)))
    G1 = fastrbf.gram(X, gamma=0.3, n_threads=1)
    assert_array_equal(bits(G1), bits(fastrbf.gram(X, gamma=0.3, n_threads=2)))
    assert_array_equal(bits(G1), bits(G1.T.copy()))


@pytest.mark.parametrize("dtype", DTYPES)
def test_knn_distances_are_sqdist_bits(rng, dtype):
    X = rng.standard_normal((1203, 5)).astype(dtype)
    Q = rng.standard_normal((29, 5)).astype(dtype)
    idx, dist = knn(X, Q, 6, n_threads=1)
    idx2, dist2 = knn(X, Q, 6, n_threads=2)
    assert_array_equal(idx, idx2)
    assert_array_equal(bits(dist), bits(dist2))
    D = fastrbf.sqdist(Q, X)
    assert_array_equal(bits(dist), bits(np.take_along_axis(D, idx, axis=1)))
    order = np.lexsort((np.broadcast_to(np.arange(X.shape[0]), D.shape), D), axis=1)[:, :6]
    assert_array_equal(idx, order)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [1, 3, 5, 9])
def test_direct_lloyd_assignment_is_sqdist_argmin(rng, dtype, K):
    X = rng.standard_normal((1000, 6)).astype(dtype)
    C = X[:K].copy()
    X[500:510] = C[K - 1]  # exact ties with the centre rows' copies
    labels, mind = lloyd_assign(X, C, n_threads=1)
    labels2, mind2 = lloyd_assign(X, C, n_threads=2)
    assert_array_equal(labels, labels2)
    assert_array_equal(bits(mind), bits(mind2))
    D = fastrbf.sqdist(X, C)
    assert_array_equal(labels, np.argmin(D, axis=1))
    assert_array_equal(bits(mind), bits(D[np.arange(1000), labels].astype(mind.dtype)))


CPUS = ([("x86-64", "+sse2,-avx,-avx2,-fma,-avx512f", 0), ("haswell", "+sse2,+avx,+avx2,+fma,-avx512f", 256)]
        if platform.machine() in ("x86_64", "AMD64") else [("generic", "", 0)])


@pytest.mark.parametrize("cpu,features,width", CPUS)
def test_other_vector_templates_same_bits(cpu, features, width):
    # the scalar (no AVX) and 256-bit (AVX2) templates, compiled for that CPU in a child
    # process, give the bits of chunk_row compiled for the same CPU
    code = f"""
import numpy as np
from fastrbf._jit import tiles
from fastrbf._jit.llvm import micro
assert micro.vector_bits() == {width}
rng = np.random.default_rng(3)
z = np.int64
for dt in (np.float64, np.float32):
    for d in (1, 3, 4, 5, 9, 16, 18):
        X = rng.standard_normal((11, d)).astype(dt)
        Yt = np.ascontiguousarray(rng.standard_normal((d, 77)).astype(dt))
        for dot in (False, True):
            out = np.empty((11, 77), dtype=dt)
            tiles.fill_block(X, z(0), z(11), Yt, z(0), z(77), np.bool_(dot), out, z(0), z(0))
            for i in range(11):
                o = np.empty(77, dtype=dt)
                tiles.chunk_row(X, z(i), Yt, z(0), z(77), np.bool_(dot), o)
                assert (o.view(np.uint8) == out[i].view(np.uint8)).all(), (dt, d, dot, i)
print("ok")
"""
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES=features, FASTRBF_CACHE="0", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


@numba.njit
def _argmin_blocks(C, Xt, best, second, lab):
    nb = micro.argmin_cols(Xt)
    for b in range(Xt.shape[1] // nb):
        micro.sq_argmin_block(C, Xt, b * nb, best[b], second[b], lab[b])


def argmin_oracle(C, Xt):
    """(smallest, second smallest, argmin with ties to the lowest index) of each column of
    the chunk_row distances of the rows of C to the columns of Xt."""
    D = chunk_rows(C, Xt, 0, Xt.shape[1], False)
    second = np.sort(D, axis=0)[1] if C.shape[0] > 1 else np.full(Xt.shape[1], np.inf, dtype=C.dtype)
    return D.min(axis=0), second, np.argmin(D, axis=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [1, 2, 3, 4, 5, 9, 13])
def test_argmin_block_matches_chunk_row_bitwise(rng, dtype, K):
    nb = micro.argmin_nr() * micro.lanes(micro.types.float64 if dtype == np.float64 else micro.types.float32)
    for d in (1, 3, 4, 7, 16, 33):
        C = (rng.standard_normal((K, d)) * 3 + 5).astype(dtype)
        Xt = np.ascontiguousarray((rng.standard_normal((3 * nb, d)) * 3 + 5).astype(dtype).T)
        Xt[:, :5] = C[K - 1, :, None]  # distance 0 to the last centre
        if K > 2:
            C[K // 2] = C[1]  # a duplicate centre: a tie of the smallest and second smallest
            Xt[:, 5] = C[1]
        best, second = np.full((2, 3, nb), np.nan, dtype=dtype)
        lab = np.full((3, nb), -1, dtype=np.int32)
        _argmin_blocks(C, Xt, best, second, lab)
        b, s, lb = argmin_oracle(C, Xt)
        assert_array_equal(bits(best.ravel()), bits(b), err_msg=f"d={d}")
        assert_array_equal(bits(second.ravel()), bits(s), err_msg=f"d={d}")
        assert_array_equal(lab.ravel(), lb, err_msg=f"d={d}")


@pytest.mark.parametrize("cpu,features,width", CPUS)
def test_argmin_block_other_vector_templates(cpu, features, width):
    # sq_argmin_block on the scalar (no AVX) and 256-bit (AVX2) templates, in a child
    # process compiled for that CPU: the minimum, second minimum and argmin of chunk_row
    code = f"""
import numba
import numpy as np
from fastrbf._jit import tiles
from fastrbf._jit.llvm import micro
assert micro.vector_bits() == {width}

@numba.njit
def run(C, Xt, best, second, lab):
    nb = micro.argmin_cols(Xt)
    for b in range(Xt.shape[1] // nb):
        micro.sq_argmin_block(C, Xt, b * nb, best[b], second[b], lab[b])

rng = np.random.default_rng(3)
z = np.int64
for dt in (np.float64, np.float32):
    nb = micro.argmin_nr() * micro.lanes(micro.types.float64 if dt == np.float64 else micro.types.float32)
    for d, K in ((1, 1), (3, 5), (5, 2), (18, 9)):
        C = rng.standard_normal((K, d)).astype(dt)
        Xt = np.ascontiguousarray(rng.standard_normal((d, 2 * nb)).astype(dt))
        Xt[:, 0] = C[K - 1]
        best, second = np.empty((2, 2, nb), dtype=dt)
        lab = np.empty((2, nb), dtype=np.int32)
        run(C, Xt, best, second, lab)
        D = np.empty((K, 2 * nb), dtype=dt)
        for i in range(K):
            tiles.chunk_row(C, z(i), Xt, z(0), z(2 * nb), np.bool_(False), D[i])
        s = np.sort(D, axis=0)[1] if K > 1 else np.full(2 * nb, np.inf, dtype=dt)
        assert (best.ravel().view(np.uint8) == D.min(axis=0).view(np.uint8)).all(), (dt, d, K)
        assert (second.ravel().view(np.uint8) == s.view(np.uint8)).all(), (dt, d, K)
        assert (lab.ravel() == np.argmin(D, axis=0)).all(), (dt, d, K)
print("ok")
"""
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES=features, FASTRBF_CACHE="0", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


@numba.njit(fastmath={"contract", "nsz", "arcp"}, error_model="numpy")
def _axpy_loop(s, lab, X, i, wi):
    # the numba loop axpy_row replaces (the Lloyd update of one row)
    for k in range(X.shape[1]):
        s[lab, k] += wi * X[i, k]


@numba.njit(fastmath={"contract", "nsz", "arcp"}, error_model="numpy")
def _axpy_intrinsic(s, lab, X, i, wi):
    micro.axpy_row(s, lab * s.shape[1], X, i * X.shape[1], wi, X.shape[1])


@numba.njit
def _sq_row(X, i, C, j):
    return micro.sq_row(X, i * X.shape[1], C, j * C.shape[1], X.shape[1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_axpy_row_is_the_loop_bitwise(rng, dtype):
    # every tail of the vector width, float32 rows into float64 sums included; the
    # elements around the row stay untouched
    for d in (1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33):
        X = (rng.standard_normal((5, d)) * 3).astype(dtype)
        s0 = rng.standard_normal((4, d))
        a, b = s0.copy(), s0.copy()
        for i, lab, wi in ((0, 1, 0.7), (3, 3, 1.0), (4, 0, 1e-3), (2, 1, 2.5)):
            _axpy_loop(a, lab, X, i, wi)
            _axpy_intrinsic(b, lab, X, i, wi)
        assert_array_equal(bits(a), bits(b), err_msg=f"d={d}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_sq_row_is_the_squared_distance(rng, dtype):
    # any summation order: within the error bound of a sum of d non-negative terms of
    # the exact float64 differences (float32 inputs convert exactly)
    for d in (1, 2, 3, 7, 8, 9, 16, 17, 33):
        X = (rng.standard_normal((3, d)) * 3).astype(dtype)
        C = (rng.standard_normal((2, d)) * 3).astype(dtype)
        for i in range(3):
            for j in range(2):
                t = X[i].astype(np.float64) - C[j].astype(np.float64)
                exact = float(np.sum(t * t))
                got = _sq_row(X, i, C, j)
                assert abs(got - exact) <= (d + 2) * np.finfo(np.float64).eps * exact, (d, i, j)
        assert _sq_row(X, 0, X, 0) == 0.0


@pytest.mark.parametrize("cpu,features,width", CPUS)
def test_axpy_and_sq_row_other_vector_templates(cpu, features, width):
    # axpy_row gives the bits of the loop compiled for the same CPU, sq_row the squared
    # distance, on the scalar (no AVX) and 256-bit (AVX2) templates
    code = f"""
import numba
import numpy as np
from fastrbf._jit.llvm import micro
assert micro.vector_bits() == {width}
FM = {{"contract", "nsz", "arcp"}}

@numba.njit(fastmath=FM, error_model="numpy")
def loop(s, lab, X, i, wi):
    for k in range(X.shape[1]):
        s[lab, k] += wi * X[i, k]

@numba.njit(fastmath=FM, error_model="numpy")
def vec(s, lab, X, i, wi):
    micro.axpy_row(s, lab * s.shape[1], X, i * X.shape[1], wi, X.shape[1])

@numba.njit
def sq(X, i, C, j):
    return micro.sq_row(X, i * X.shape[1], C, j * C.shape[1], X.shape[1])

rng = np.random.default_rng(3)
for dt in (np.float64, np.float32):
    for d in (1, 3, 4, 5, 9, 16, 18):
        X = rng.standard_normal((3, d)).astype(dt)
        a = rng.standard_normal((2, d))
        b = a.copy()
        loop(a, 1, X, 2, 0.3)
        vec(b, 1, X, 2, 0.3)
        assert (a.view(np.uint8) == b.view(np.uint8)).all(), (dt, d)
        t = X[0].astype(np.float64) - X[1].astype(np.float64)
        e = float(np.sum(t * t))
        assert abs(sq(X, 0, X, 1) - e) <= (d + 2) * 2.3e-16 * e, (dt, d)
print("ok")
"""
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES=features, FASTRBF_CACHE="0", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]
