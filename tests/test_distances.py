"""sqdist against the NumPy reference, SciPy, and extended-precision values."""

import numpy as np
import pytest
from helpers import TOL, assert_rel, exact_sqdist
from numpy.testing import assert_array_equal
from scipy.spatial.distance import cdist

import fastrbf
from fastrbf import _pairwise, reference

DTYPES = [np.float64, np.float32]
SHAPES = [(1, 1, 1), (3, 1, 5), (257, 2, 31), (40, 16, 513), (65, 70, 9)]


@pytest.fixture(params=["direct", "gemm", "gemm-chunks"])
def path(request, monkeypatch):
    """Run a test on both code paths (the GEMM one forced for any d; "gemm-chunks" with
    GEMMs of 3 features at a time, as the certified path runs many features)."""
    if request.param.startswith("gemm"):
        monkeypatch.setattr(_pairwise, "GEMM_MIN_FEATURES", {np.dtype(np.float64): 1, np.dtype(np.float32): 1})
        monkeypatch.setattr(_pairwise, "GEMM_BLOCK_ELEMENTS", 64)  # several row blocks
        if request.param == "gemm-chunks":
            monkeypatch.setattr(_pairwise, "GEMM_CHUNK", 3)
    else:
        monkeypatch.setattr(_pairwise, "GEMM_MIN_FEATURES", {np.dtype(np.float64): 10**9, np.dtype(np.float32): 10**9})
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,d,m", SHAPES)
def test_matches_reference_and_scipy(rng, path, dtype, n, d, m):
    X = rng.standard_normal((n, d)).astype(dtype)
    Y = rng.standard_normal((m, d)).astype(dtype)
    D = fastrbf.sqdist(X, Y)
    assert D.dtype == dtype and D.shape == (n, m)
    assert_rel(D, exact_sqdist(X, Y), TOL[dtype], atol=TOL[dtype] * 1e-3)
    np.testing.assert_allclose(D, cdist(X.astype(float), Y.astype(float), "sqeuclidean"), rtol=TOL[dtype] * 10)
    np.testing.assert_allclose(D, reference.sqdist(X, Y), rtol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype,offset", [(np.float64, 1e8), (np.float32, 1e4)])
def test_far_from_origin_and_near_duplicates(rng, path, dtype, offset):
    """Where ||x||^2 + ||y||^2 - 2 x.y alone fails."""
    X = (offset + rng.standard_normal((120, 20))).astype(dtype)
    Y = np.concatenate([X[:40] + (offset * 4 * np.finfo(dtype).eps), (offset + rng.standard_normal((30, 20)))]).astype(dtype)
    Y[:10] = X[50:60]  # identical rows
    D = fastrbf.sqdist(X, Y)
    exact = exact_sqdist(X, Y)
    assert_rel(D, exact, TOL[dtype])
    assert np.all(D[50:60, :10][np.eye(10, dtype=bool)] == 0)
    assert np.all(D >= 0)


def test_norm_trick_would_fail_here(rng):
    """The data of the test above does defeat the plain expansion (the test has teeth)."""
    X = 1e8 + rng.standard_normal((50, 20))
    naive = (X**2).sum(1)[:, None] + (X**2).sum(1)[None, :] - 2 * X @ X.T
    exact = exact_sqdist(X, X)
    off = ~np.eye(50, dtype=bool)
    assert (np.abs(naive - exact)[off] / exact[off]).max() > 1e-6


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,d", [(1, 1), (2, 3), (257, 4), (300, 80)])
def test_symmetric(rng, path, dtype, n, d):
    X = rng.standard_normal((n, d)).astype(dtype)
    D = fastrbf.sqdist(X)
    assert_array_equal(D, D.T)
    assert np.all(np.diag(D) == 0)
    assert_rel(D, exact_sqdist(X, X), TOL[dtype], atol=TOL[dtype] * 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_thread_count_does_not_change_bits(rng, path, dtype):
    X = rng.standard_normal((301, 7)).astype(dtype)
    Y = rng.standard_normal((1100, 7)).astype(dtype)
    assert_array_equal(fastrbf.sqdist(X, Y, n_threads=1), fastrbf.sqdist(X, Y, n_threads=2))
    assert_array_equal(fastrbf.sqdist(X, n_threads=1), fastrbf.sqdist(X, n_threads=-1))


def test_out_is_filled_and_returned(rng):
    X = rng.standard_normal((20, 3))
    Y = rng.standard_normal((7, 3))
    out = np.full((20, 7), np.nan)
    res = fastrbf.sqdist(X, Y, out=out)
    assert res is out
    np.testing.assert_allclose(out, reference.sqdist(X, Y), rtol=1e-12)


def test_inputs_not_modified_and_odd_layouts(rng):
    X = rng.standard_normal((30, 4))
    Y = np.asfortranarray(rng.standard_normal((12, 4)))
    Xs = rng.standard_normal((60, 8))[::2, ::2]  # non-contiguous
    Xb = X.astype(">f8")  # non-native byte order
    Xr = X.copy()
    Xr.setflags(write=False)
    Xc, Yc = X.copy(), Y.copy()
    expect = reference.sqdist(X, Y)
    for a in (X, Xb, Xr):
        np.testing.assert_allclose(fastrbf.sqdist(a, Y), expect, rtol=1e-12)
    np.testing.assert_allclose(fastrbf.sqdist(Xs), reference.sqdist(np.ascontiguousarray(Xs)), rtol=1e-12, atol=1e-14)
    assert_array_equal(X, Xc)
    assert_array_equal(Y, Yc)


def test_ints_and_bools_become_float64_mixed_becomes_float64():
    Xi = np.array([[0, 0], [3, 4]])
    assert fastrbf.sqdist(Xi).dtype == np.float64
    assert fastrbf.sqdist(Xi.astype(bool)).dtype == np.float64
    assert fastrbf.sqdist(Xi.astype(np.float32), Xi.astype(np.float64)).dtype == np.float64
    assert fastrbf.sqdist([[0.0, 0.0], [3.0, 4.0]])[0, 1] == 25.0


@pytest.mark.parametrize(
    "X,Y,exc,match",
    [
        (np.array([[np.nan, 1.0]]), None, ValueError, r"`X` must contain only finite values; got nan"),
        (np.ones((2, 2)), np.array([[1.0, np.inf]]), ValueError, r"`Y` must contain only finite values; got inf"),
        (np.ones(3), None, ValueError, r"`X` must be a 2-D array .* got shape \(3,\)"),
        (np.ones((2, 2, 2)), None, ValueError, r"`X` must be a 2-D array .* got shape \(2, 2, 2\)"),
        (np.ones((0, 3)), None, ValueError, r"`X` must not be empty; got shape \(0, 3\)"),
        (np.ones((2, 0)), None, ValueError, r"`X` must not be empty"),
        (np.ones((2, 3)), np.ones((2, 4)), ValueError, r"`Y` must have the same number of features as `X` \(3\); got 4"),
        (np.ones((2, 2), complex), None, TypeError, r"`X` must be an array of real numbers; got dtype complex128"),
        (np.array([["a", "b"]]), None, TypeError, r"`X` must be an array of real numbers; got dtype <U1"),
        (np.array([[object(), 1]], dtype=object), None, TypeError, r"got dtype object"),
    ],
)
def test_bad_input(X, Y, exc, match):
    with pytest.raises(exc, match=match):
        fastrbf.sqdist(X, Y)


@pytest.mark.parametrize(
    "out,exc,match",
    [
        (np.empty((3, 3)), ValueError, r"`out` must have shape \(3, 2\); got \(3, 3\)"),
        (np.empty((3, 2), np.float32), ValueError, r"`out` must have dtype float64 .* got float32"),
        (np.empty((2, 3)).T, ValueError, r"`out` must be a C-contiguous, writeable"),
        ([[0.0] * 2] * 3, TypeError, r"`out` must be a numpy.ndarray; got list"),
    ],
)
def test_bad_out(out, exc, match):
    with pytest.raises(exc, match=match):
        fastrbf.sqdist(np.ones((3, 2)), np.ones((2, 2)), out=out)


def test_out_must_not_alias_input():
    buf = np.zeros((4, 4))
    with pytest.raises(ValueError, match="`out` must not share memory with an input"):
        fastrbf.sqdist(buf, out=buf)


def test_memory_error_before_allocating(monkeypatch):
    from fastrbf import _validation

    monkeypatch.setattr(_validation, "available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match=r"sqdist: the 100 x 100 float64 result needs .* GiB .*gram_matvec"):
        fastrbf.sqdist(np.ones((100, 2)))


@pytest.mark.parametrize("n_threads,exc,match",
                         [(0, ValueError, "got 0"), (1.5, TypeError, "got 1.5"), ("2", TypeError, "got '2'")])
def test_bad_n_threads(n_threads, exc, match):
    with pytest.raises(exc, match=match):
        fastrbf.sqdist(np.ones((3, 2)), n_threads=n_threads)


def test_out_must_not_alias_any_input(rng):
    X = rng.standard_normal((4, 3))
    buf = rng.standard_normal((4, 4))
    buf0 = buf.copy()
    for args in ((X, buf[:, :3]), (buf[:, :3], X), (buf[:, :3], None), (buf[:, 1:], buf[:, :3])):
        with pytest.raises(ValueError, match="`out` must not share memory with an input"):
            fastrbf.sqdist(*args, out=buf)
        assert_array_equal(buf, buf0)


def test_extreme_magnitudes():
    # squared distances beyond the float64 range round to inf (IEEE overflow), as the
    # exact value is not representable; tiny values keep their (subnormal) squares
    X = np.array([[0.0, 0.0], [1e160, -1e160]])
    assert_array_equal(fastrbf.sqdist(X), [[0.0, np.inf], [np.inf, 0.0]])
    tiny = np.array([[1e-160, 0.0], [0.0, 0.0]])
    assert_array_equal(fastrbf.sqdist(tiny), [[0.0, 1e-320], [1e-320, 0.0]])
