"""gram and gram_matvec against the NumPy reference and scikit-learn."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import fastrbf
from fastrbf import KERNELS, _pairwise, reference

DTYPES = [np.float64, np.float32]
RADIAL = [k for k, v in KERNELS.items() if v.radial]


def _tol(dtype, kernel):
    # phi amplifies the relative error of s = gamma r^2 by |s phi'(s) / phi(s)| (<= ~30 here)
    return {np.float64: 1e-11, np.float32: 2e-5}[dtype]


@pytest.fixture(params=["direct", "gemm"])
def path(request, monkeypatch):
    big = 1 if request.param == "gemm" else 10**9
    monkeypatch.setattr(_pairwise, "GEMM_MIN_FEATURES", {np.dtype(np.float64): big, np.dtype(np.float32): big})
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("n,d,m", [(1, 1, 1), (257, 3, 19), (33, 5, 600)])
def test_matches_reference(rng, path, dtype, kernel, n, d, m):
    X = rng.standard_normal((n, d)).astype(dtype)
    Y = rng.standard_normal((m, d)).astype(dtype)
    K = fastrbf.gram(X, Y, kernel=kernel, gamma=0.7)
    ref = reference.gram(X.astype(np.float64), Y.astype(np.float64), kernel=kernel, gamma=0.7)
    assert K.dtype == dtype and K.shape == (n, m)
    scale = np.abs(ref).max() if kernel in ("polynomial",) else 1.0
    np.testing.assert_allclose(K, ref, rtol=_tol(dtype, kernel), atol=_tol(dtype, kernel) * 1e-2 * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_symmetric_and_exact_diagonal(rng, path, dtype, kernel):
    X = rng.standard_normal((150, 4)).astype(dtype)
    K = fastrbf.gram(X, kernel=kernel, gamma=0.3)
    assert_array_equal(K, K.T)
    if KERNELS[kernel].radial:
        at0 = reference.kernel_function(kernel, np.zeros(1, dtype=dtype))[0]
        assert np.all(np.diag(K) == at0)
    np.testing.assert_allclose(K, reference.gram(X.astype(float), kernel=kernel, gamma=0.3), rtol=_tol(dtype, kernel),
                               atol=1e-6 if dtype == np.float32 else 1e-12)


def test_gaussian_diagonal_is_one_and_matches_sklearn(rng):
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, sigmoid_kernel

    X = rng.standard_normal((300, 6))
    Y = rng.standard_normal((40, 6))
    K = fastrbf.gram(X, gamma=0.25)
    assert np.all(np.diag(K) == 1.0)
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=0.25), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(fastrbf.gram(X, Y, kernel="polynomial", gamma=0.5, degree=3, coef0=2.0),
                               polynomial_kernel(X, Y, degree=3, gamma=0.5, coef0=2.0), rtol=1e-12)
    np.testing.assert_allclose(fastrbf.gram(X, Y, kernel="tanh", gamma=0.1, coef0=1.0),
                               sigmoid_kernel(X, Y, gamma=0.1, coef0=1.0), rtol=1e-12)


@pytest.mark.parametrize("name", ["gaussian", "inverse_multiquadric", "inverse_quadratic"])
def test_same_kernel_as_scipy_rbfinterpolator(rng, name):
    """SciPy's phi(epsilon r) is our phi(gamma r^2) with gamma = epsilon^2: interpolating
    with our Gram matrix reproduces RBFInterpolator's predictions."""
    from scipy.interpolate import RBFInterpolator

    X = rng.uniform(-1, 1, (40, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    Xq = rng.uniform(-1, 1, (25, 2))
    eps = 1.7
    coef = np.linalg.solve(fastrbf.gram(X, kernel=name, gamma=eps**2), y)
    ours = fastrbf.gram(Xq, X, kernel=name, gamma=eps**2) @ coef
    theirs = RBFInterpolator(X, y, kernel=name, epsilon=eps, degree=-1)(Xq)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_column_gamma(rng, path, dtype):
    X = rng.standard_normal((70, 3)).astype(dtype)
    g = rng.uniform(0.1, 2.0, size=70)
    K = fastrbf.gram(X, gamma=g)
    ref = np.exp(-reference.sqdist(X.astype(float)) * g[None, :])
    np.testing.assert_allclose(K, ref, rtol=_tol(dtype, "gaussian"))
    assert not np.array_equal(K, K.T)  # per-centre widths are not symmetric
    Y = rng.standard_normal((5, 3)).astype(dtype)
    np.testing.assert_allclose(fastrbf.gram(X, Y, kernel="inverse_quadratic", gamma=g[:5]),
                               reference.gram(X.astype(float), Y.astype(float), kernel="inverse_quadratic", gamma=g[:5]),
                               rtol=_tol(dtype, "x"))


def test_far_from_origin_gram_accuracy(rng, path):
    X = 1e8 + rng.standard_normal((60, 5))
    K = fastrbf.gram(X, gamma=0.5)
    from helpers import exact_sqdist

    exact = np.exp(-0.5 * exact_sqdist(X, X).astype(float))
    np.testing.assert_allclose(K, exact, rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("dtype", DTYPES)
def test_thread_count_does_not_change_bits(rng, path, dtype):
    X = rng.standard_normal((301, 5)).astype(dtype)
    Y = rng.standard_normal((900, 5)).astype(dtype)
    for kernel in ("gaussian", "tanh"):
        assert_array_equal(fastrbf.gram(X, Y, kernel=kernel, n_threads=1), fastrbf.gram(X, Y, kernel=kernel, n_threads=2))
    V = rng.standard_normal((900, 3)).astype(dtype)
    assert_array_equal(fastrbf.gram_matvec(X, Y, V, n_threads=1), fastrbf.gram_matvec(X, Y, V, n_threads=2))


def test_out(rng):
    X = rng.standard_normal((10, 2))
    out = np.empty((10, 10))
    assert fastrbf.gram(X, out=out, kernel="cubic") is out
    np.testing.assert_allclose(out, reference.gram(X, kernel="cubic"), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(gamma=0.0), ValueError, r"`gamma` must be a finite number > 0; got 0.0"),
        (dict(gamma=-1.0), ValueError, r"`gamma` must be a finite number > 0; got -1.0"),
        (dict(gamma=np.inf), ValueError, r"`gamma` must be a finite number > 0; got inf"),
        (dict(gamma=[1.0, 2.0]), ValueError,
         r"`gamma` must be a scalar or a 1-D array with one value per column of the result \(4\); got shape \(2,\)"),
        (dict(gamma=[1.0, 2.0, -3.0, 1.0]), ValueError, r"`gamma` must contain only finite values > 0; got -3.0"),
        (dict(gamma="wide"), TypeError, r"`gamma` must be a number or a 1-D array of numbers; got 'wide'"),
        (dict(kernel="rbf"), ValueError, r"`kernel` must be one of \[.*'gaussian'.*\]; got 'rbf'"),
        (dict(kernel="polynomial", degree=0), ValueError, r"`degree` must be an int in \[1, 1000\]; got 0"),
        (dict(kernel="tanh", coef0=np.nan), ValueError, r"`coef0` must be a finite number; got nan"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fastrbf.gram(np.ones((4, 2)), **kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "thin_plate_spline", "polynomial", "tanh"])
@pytest.mark.parametrize("n,m,k", [(1, 1, None), (37, 1100, None), (100, 513, 3)])
def test_gram_matvec_matches_build_then_multiply(rng, dtype, kernel, n, m, k):
    X = rng.standard_normal((n, 4)).astype(dtype)
    Y = rng.standard_normal((m, 4)).astype(dtype)
    V = rng.standard_normal(m if k is None else (m, k)).astype(dtype)
    got = fastrbf.gram_matvec(X, Y, V, kernel=kernel, gamma=0.4)
    ref = reference.gram_matvec(X.astype(float), Y.astype(float), V.astype(float), kernel=kernel, gamma=0.4)
    assert got.shape == ref.shape and got.dtype == dtype
    # error relative to the sum of absolute terms, which is what a dot product can promise
    absref = np.abs(reference.gram(X.astype(float), Y.astype(float), kernel=kernel, gamma=0.4)) @ np.abs(V.astype(float))
    tol = 1e-13 if dtype == np.float64 else 1e-5
    assert np.all(np.abs(got - ref) <= tol * absref + 1e-300)


def test_gram_matvec_per_column_gamma_and_mixed_dtype(rng):
    X = rng.standard_normal((20, 2)).astype(np.float32)
    Y = rng.standard_normal((30, 2))
    g = rng.uniform(0.5, 1.5, 30)
    v = rng.standard_normal(30)
    got = fastrbf.gram_matvec(X, Y, v, gamma=g)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, reference.gram(X.astype(float), Y, gamma=g) @ v, rtol=1e-12)


@pytest.mark.parametrize(
    "V,match",
    [
        (np.ones(5), r"`V` must have one row per row of `Y` \(4\); got shape \(5,\)"),
        (np.ones((4, 2, 1)), r"`V` must be a 2-D array"),
        (np.array([1.0, np.nan, 1.0, 1.0]), r"`V` must contain only finite values"),
    ],
)
def test_gram_matvec_bad_v(V, match):
    with pytest.raises(ValueError, match=match):
        fastrbf.gram_matvec(np.ones((3, 2)), np.ones((4, 2)), V)


@pytest.mark.parametrize("kernel", ["gaussian", "tanh"])
def test_out_must_be_apart_from_every_input(rng, kernel):
    X = rng.standard_normal((4, 2))
    out = rng.uniform(0.5, 1.0, (4, 4))
    out0 = out.copy()
    for kwargs in (dict(gamma=out[0]), dict(gamma=out[:, 1].copy(), Y=out[:, :2]), dict(X=out[:, :2]),
                   dict(gamma=out[0], Y=X)):
        args = {"X": X, **kwargs}
        with pytest.raises(ValueError, match="`out` must not share memory with an input array"):
            fastrbf.gram(args.pop("X"), args.pop("Y", None), kernel=kernel, out=out, **args)
        assert_array_equal(out, out0)


def test_gamma_is_checked_in_the_result_dtype():
    X32 = np.eye(2, dtype=np.float32)
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0 in float32 \(the result dtype: "
                                         r"from 1.4e-45 to 3.4e\+38\); got 1e\+39"):
        fastrbf.gram(X32, gamma=1e39)
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0 in float32 .*got 1e-50"):
        fastrbf.gram(X32, gamma=1e-50)
    with pytest.raises(ValueError, match=r"`gamma` must contain only finite values > 0 in float32 .*got 1e\+39"):
        fastrbf.gram(X32, gamma=[1.0, 1e39])
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0 in float32"):
        fastrbf.gram_matvec(X32, X32, np.ones(2, np.float32), gamma=1e39)
    # the same gamma is fine in float64
    K = fastrbf.gram(X32.astype(np.float64), gamma=1e39)
    assert_array_equal(K, np.eye(2))


@pytest.mark.parametrize("kernel, gamma", [("quintic", 1e300), ("multiquadric", 1e308), ("cubic", 1e307)])
def test_overflowing_kernel_values_are_refused(kernel, gamma):
    X = np.array([[0.0], [10.0]])
    with pytest.raises(ValueError, match=r"gram overflows float64 for these `X`, `Y` and `gamma`"):
        fastrbf.gram(X, kernel=kernel, gamma=gamma)
    with pytest.raises(ValueError, match=r"gram_matvec overflows float64 for these `X`, `Y`, `V` and `gamma`"):
        fastrbf.gram_matvec(X, X, np.ones(2), kernel=kernel, gamma=gamma)
    with pytest.raises(ValueError, match=r"gram overflows float64 for these `X`, `Y`, `gamma`, `degree` and `coef0`"):
        fastrbf.gram(X * 1e10, kernel="polynomial", degree=40)
    # decaying kernels reach their limit 0 instead
    assert_array_equal(fastrbf.gram(X, gamma=1e308), np.eye(2))


def test_gram_matvec_ragged_and_huge_requests(monkeypatch):
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match=r"`V` must be a rectangular array of real numbers; got a ragged") as exc:
        fastrbf.gram_matvec(X, X, [[1.0], [2.0, 3.0], [4.0]])
    assert "sequence" not in str(exc.value)
    with pytest.raises(ValueError, match=r"`Y` must be a rectangular array of real numbers; got a ragged"):
        fastrbf.gram_matvec(X, [[1.0, 2.0], [3.0]], np.ones(2))
    # a 200000 x 200000 result (320 GB) from small inputs: fastrbf's MemoryError, before allocating
    Xb = np.zeros((200_000, 1))
    with pytest.raises(MemoryError, match=r"gram_matvec: the 200000 x 200000 float64 result and working copies "
                                          r"needs .* GiB .*pass fewer rows of `X`"):
        fastrbf.gram_matvec(Xb, np.zeros((1, 1)), np.ones((1, 200_000)))
    from fastrbf import _validation

    monkeypatch.setattr(_validation, "available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match=r"gram_matvec: the 30 x 1 float64 result"):
        fastrbf.gram_matvec(np.ones((30, 2)), np.ones((30, 2)), np.ones(30))


def test_coef0_and_degree_types():
    with pytest.raises(TypeError, match=r"`coef0` must be a finite number; got 'x'"):
        fastrbf.gram(np.ones((2, 2)), kernel="tanh", coef0="x")
    with pytest.raises(TypeError, match=r"`coef0` must be a finite number; got True"):
        fastrbf.gram(np.ones((2, 2)), kernel="tanh", coef0=True)
    with pytest.raises(TypeError, match=r"`degree` must be an int in \[1, 1000\]; got 2.0"):
        fastrbf.gram(np.ones((2, 2)), kernel="polynomial", degree=2.0)
    with pytest.raises(ValueError, match=r"`degree` must be an int in \[1, 1000\]; got 10000"):
        fastrbf.gram(np.ones((2, 2)), kernel="polynomial", degree=10**4)
    with pytest.raises(TypeError, match=r"`gamma` must be a number or a 1-D array of numbers; got \[True, False\]"):
        fastrbf.gram(np.ones((2, 2)), gamma=[True, False])


@pytest.mark.parametrize("dtype, big", [(np.float64, 1e160), (np.float32, 1e19)])
def test_magnitudes_whose_squares_overflow_are_refused(dtype, big):
    X = np.array([[0.0, 0.0], [big, -big]], dtype=dtype)
    match = (r"`X` must have values of magnitude at most .* squared distances over 2 feature\(s\) would overflow\); "
             r"got .* Rescale the data")
    with pytest.raises(ValueError, match=match):
        fastrbf.gram(X, kernel="linear")
    with pytest.raises(ValueError, match=r"`Y` must have values of magnitude at most"):
        fastrbf.gram(np.zeros((1, 2), dtype=dtype), X)
    with pytest.raises(ValueError, match=match):
        fastrbf.gram_matvec(X, X[:1], np.ones(1, dtype=dtype))
    if dtype == np.float64:  # models compute in float64
        with pytest.raises(ValueError, match=match):
            fastrbf.kernel_ridge(X, np.ones(2), gamma=1.0, alpha=1.0)
    # just below the bound: finite
    ok = np.sqrt(np.finfo(dtype).max / 32.0) * 0.99
    K = fastrbf.gram(np.array([[ok, -ok]], dtype=dtype), np.array([[-ok, ok]], dtype=dtype), kernel="linear",
                     gamma=1e-30)
    assert np.all(np.isfinite(K))
    # a float32 value that is fine for a float64 result
    assert np.all(np.isfinite(fastrbf.gram(np.array([[0.0], [1e19]], np.float32), np.zeros((1, 1)), kernel="linear",
                                           gamma=1e-30)))


def test_huge_python_ints_are_named():
    for kwargs, match in [(dict(gamma=10**400), r"`gamma` must be a finite number > 0; got 1000"),
                          (dict(kernel="tanh", coef0=10**400), r"`coef0` must be a finite number; got 1000")]:
        with pytest.raises(ValueError, match=match):
            fastrbf.gram(np.ones((2, 2)), **kwargs)
    with pytest.raises(ValueError, match=r"`coef0` must be a finite number in float32 \(the result dtype\)"):
        fastrbf.gram(np.ones((2, 2), np.float32), kernel="tanh", coef0=1e300)


@pytest.mark.parametrize("nu, kernel", [(0.5, "matern12"), (1.5, "matern32"), (2.5, "matern52")])
@pytest.mark.parametrize("d", [1, 3, 16])
def test_matern_matches_sklearn(rng, nu, kernel, d):
    from sklearn.gaussian_process.kernels import Matern

    X = rng.standard_normal((120, d))
    Y = rng.standard_normal((70, d))
    length_scale = 0.8 * np.sqrt(d)
    K = fastrbf.gram(X, Y, kernel=kernel, gamma=1 / length_scale**2)
    ref = Matern(length_scale=length_scale, nu=nu)(X, Y)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-300)
    assert np.all(np.diag(fastrbf.gram(X, kernel=kernel, gamma=0.4)) == 1.0)


@pytest.mark.parametrize("alpha", [0.05, 1.0, 7.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rational_quadratic_matches_sklearn(rng, alpha, dtype):
    from sklearn.gaussian_process.kernels import RationalQuadratic

    X = rng.standard_normal((90, 4))
    Y = rng.standard_normal((60, 4))
    K = fastrbf.gram(X.astype(dtype), Y.astype(dtype), kernel="rational_quadratic", gamma=1 / 1.7**2, coef0=alpha)
    ref = RationalQuadratic(length_scale=1.7, alpha=alpha)(X.astype(dtype).astype(np.float64),
                                                           Y.astype(dtype).astype(np.float64))
    assert K.dtype == dtype
    np.testing.assert_allclose(K, ref, rtol=1e-12 if dtype == np.float64 else 2e-6)
    assert np.all(np.diag(fastrbf.gram(X, kernel="rational_quadratic", gamma=0.4, coef0=alpha)) == 1.0)
    m = fastrbf.kernel_ridge(X, X[:, 0], kernel="rational_quadratic", gamma=0.3, coef0=alpha, alpha=1e-2)
    Kx = RationalQuadratic(length_scale=0.3**-0.5, alpha=alpha)(X)
    np.testing.assert_allclose(m.weights[:, 0], np.linalg.solve(Kx + 1e-2 * np.eye(90), X[:, 0]), rtol=1e-8)


def test_rational_quadratic_shape_must_be_positive():
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match=r"`coef0` must be a finite number > 0 \(the shape of the rational "
                                             r"quadratic kernel\); got"):
            fastrbf.gram(np.ones((2, 2)), kernel="rational_quadratic", coef0=bad)


@pytest.mark.parametrize("kernel", ["wendland_c2", "wendland_c4", "truncated"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_compact_support_sparse_and_positive_definite(rng, kernel, d):
    spec = KERNELS[kernel]
    assert spec.support == 1.0 and spec.max_dim == 3
    X = rng.random((300, d))
    gamma = 4.0  # support radius 0.5
    K = fastrbf.gram(X, kernel=kernel, gamma=gamma)
    D = np.sqrt(reference.sqdist(X))
    outside = np.sqrt(gamma) * D >= spec.support
    assert outside.any() and np.all(K[outside] == 0.0)
    assert np.all(K[~outside] > 0.0) or kernel == "truncated"
    assert np.linalg.eigvalsh(K).min() > -1e-12 * np.abs(K).max()


def test_registry_declares_definiteness_and_support():
    for name, k in KERNELS.items():
        assert k.max_dim is None or k.max_dim >= 0, name
        assert k.support is None or (k.radial and k.support > 0), name
    assert KERNELS["tanh"].max_dim == 0
    assert KERNELS["gaussian"].max_dim is None and KERNELS["gaussian"].support is None
    assert KERNELS["matern12"].code == KERNELS["laplacian"].code
