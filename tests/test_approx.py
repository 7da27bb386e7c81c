"""Random Fourier features and Nystroem maps."""

import pickle

import numpy as np
import pytest
from helpers import TOL
from scipy import stats

from fastrbf import NystroemMap, RandomFourierMap, gram, kmeans, nystroem, random_fourier, reference
from fastrbf import approx as _approx

DTYPES = [np.float64, np.float32]


def _ref(rff, X):
    if rff.kind == "cos":
        return reference.random_fourier_transform(X, rff.weights, rff.offset)
    return reference.random_fourier_pair_transform(X, rff.weights)


# ---------------------------------------------------------------- random Fourier: distribution
def test_distribution_is_rbfsamplers():
    """W / sqrt(2 gamma) ~ N(0, 1) and b / 2pi ~ U[0, 1] (KS tests, p > 1e-3 with this
    fixed seed), and W has the law of scikit-learn RBFSampler's random_weights_
    (two-sample KS, p > 1e-3)."""
    from sklearn.kernel_approximation import RBFSampler

    gamma = 0.3
    rff = random_fourier(4, 5000, gamma=gamma, seed=0)
    w = rff.weights.ravel() / np.sqrt(2 * gamma)
    assert stats.kstest(w, "norm").pvalue > 1e-3
    assert stats.kstest(rff.offset / (2 * np.pi), "uniform").pvalue > 1e-3
    assert abs(w.mean()) < 0.02 and abs(w.var() - 1) < 0.03
    sk = RBFSampler(gamma=gamma, n_components=5000, random_state=1).fit(np.zeros((1, 4)))
    assert stats.ks_2samp(rff.weights.ravel(), sk.random_weights_.ravel()).pvalue > 1e-3
    assert stats.ks_2samp(rff.offset, sk.random_offset_).pvalue > 1e-3
    # the same scaling: our map with scikit-learn's draws is scikit-learn's transform
    X = np.random.default_rng(2).standard_normal((50, 4))
    ours = RandomFourierMap(sk.random_weights_, sk.random_offset_, gamma, "cos").transform(X)
    np.testing.assert_allclose(ours, sk.transform(X), rtol=0, atol=1e-13)


@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_error_shrinks_like_one_over_sqrt_d(kind, rng):
    """max |Z Z^T - K| at D = 4000 is below 0.7x that at D = 1000 (expected 0.5x),
    averaged over 4 seeds."""
    X = rng.standard_normal((60, 3))
    K = gram(X, gamma=0.25)

    def err(D, seed):
        Z = random_fourier(3, D, gamma=0.25, seed=seed, kind=kind).transform(X)
        return np.abs(Z @ Z.T - K).max()

    e1 = np.mean([err(1000, s) for s in range(4)])
    e4 = np.mean([err(4000, s) for s in range(4)])
    assert e4 < 0.7 * e1
    assert e4 < 0.1


# ---------------------------------------------------------------- random Fourier: values
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
@pytest.mark.parametrize("shape", [(1, 1), (257, 3), (40, 16)])
def test_equals_reference(dtype, kind, shape, rng):
    n, d = shape
    D = 2 if (n, d) == (1, 1) else 1030  # 1030: more than two column chunks
    X = rng.standard_normal(shape).astype(dtype)
    rff = random_fourier(d, D, gamma=0.7, seed=1, kind=kind, dtype=dtype)
    Z = rff.transform(X)
    assert Z.dtype == dtype and Z.shape == (n, D)
    scale = np.sqrt(2.0 / D)
    np.testing.assert_allclose(Z, _ref(rff, X), rtol=0, atol=TOL[dtype] * scale * 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_arguments_beyond_the_fast_range(dtype, kind):
    """Projections past LIMIT (1e6 / 1e5) take libm's cos/sin: still correct."""
    X = np.array([[3.0e6], [1.0], [-2.5e5], [0.0]], dtype=dtype)
    rff = random_fourier(1, 1200, gamma=0.5, seed=3, kind=kind, dtype=dtype)
    Z = rff.transform(X)
    P = X.astype(np.float64) @ rff.weights.astype(np.float64)
    assert np.abs(P).max() > 1e6
    np.testing.assert_allclose(Z, _ref(rff, X), rtol=0, atol=TOL[dtype] * np.sqrt(2.0 / 1200) * 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scan_path_equals_checked_path(dtype, rng, monkeypatch):
    """Data whose norm bound exceeds the limit scans the arguments; the result equals the
    unscanned path where no argument is large."""
    X = rng.standard_normal((30, 2)).astype(dtype)
    rff = random_fourier(2, 700, gamma=1.0, seed=0, dtype=dtype)
    Z1 = rff.transform(X)
    monkeypatch.setattr(_approx._jt, "LIMIT_F64", 1e-3)
    monkeypatch.setattr(_approx._jt, "LIMIT_F32", 1e-3)
    np.testing.assert_array_equal(rff.transform(X), Z1)


@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_threads_give_identical_results(kind, rng, monkeypatch):
    X = rng.standard_normal((300, 5))
    rff = random_fourier(5, 512, gamma=0.2, seed=0, kind=kind)
    Z1 = rff.transform(X, n_threads=1)
    monkeypatch.setattr(_approx, "PAIR_BLOCK_BYTES", 256 * 8 * 7)  # force several row blocks
    np.testing.assert_array_equal(rff.transform(X, n_threads=2), Z1)
    np.testing.assert_array_equal(rff.transform(X, n_threads=-1), Z1)


@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_concurrent_calls_from_python_threads(kind, rng):
    from concurrent.futures import ThreadPoolExecutor

    Xs = [rng.standard_normal((200, 4)) for _ in range(6)]
    rff = random_fourier(4, 300, gamma=0.5, seed=0, kind=kind)
    serial = [rff.transform(X, n_threads=1) for X in Xs]
    with ThreadPoolExecutor(3) as ex:
        results = list(ex.map(rff.transform, Xs))
    for a, b in zip(results, serial, strict=True):
        np.testing.assert_array_equal(a, b)


def test_dtype_rules_out_and_pickle(rng):
    X32 = rng.standard_normal((10, 3)).astype(np.float32)
    m32 = random_fourier(3, 8, gamma=1.0, seed=0, dtype=np.float32)
    m64 = random_fourier(3, 8, gamma=1.0, seed=0)
    assert m32.transform(X32).dtype == np.float32
    assert m32.transform(X32.astype(np.float64)).dtype == np.float64
    assert m64.transform(X32).dtype == np.float64
    assert m32.transform([[1, 2, 3]]).dtype == np.float64  # integers become float64
    out = np.empty((10, 8), dtype=np.float32)
    assert m32.transform(X32, out=out) is out
    np.testing.assert_array_equal(out, m32.transform(X32))
    again = pickle.loads(pickle.dumps(m32))
    np.testing.assert_array_equal(again.transform(X32), out)
    assert (again.n_features, again.n_components, again.kind, again.dtype) == (3, 8, "cos", np.float32)
    # seeds: int and Generator give the same draws; read-only and Fortran input work
    a = random_fourier(3, 8, gamma=1.0, seed=np.random.default_rng(0))
    np.testing.assert_array_equal(a.weights, m64.weights)
    Xf = np.asfortranarray(X32.astype(np.float64))
    Xf.flags.writeable = False
    np.testing.assert_array_equal(m64.transform(Xf), m64.transform(X32.astype(np.float64)))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(n_components=0), ValueError, r"`n_components` must be an int >= 1; got 0\."),
        (dict(n_components=2.5), ValueError, r"`n_components` must be an int >= 1; got 2\.5\."),
        (dict(n_components=7, kind="cos_sin"), ValueError, r"`n_components` must be even for kind='cos_sin'.*got 7\."),
        (dict(n_features=0), ValueError, r"`n_features` must be an int >= 1; got 0\."),
        (dict(gamma=-1.0), ValueError, r"`gamma` must be a finite number > 0; got -1\.0\."),
        (dict(gamma=0), ValueError, r"`gamma` must be a finite number > 0; got 0\."),
        (dict(gamma=np.nan), ValueError, r"`gamma` must be a finite number > 0; got nan\."),
        (dict(gamma="1"), ValueError, r"`gamma` must be a finite number > 0; got '1'\."),
        (dict(kind="sin"), ValueError, r"`kind` must be one of \['cos', 'cos_sin'\]; got 'sin'\."),
        (dict(dtype=np.int64), ValueError, r"`dtype` must be float32 or float64; got"),
        (dict(dtype="x"), TypeError, r"`dtype` must be float32 or float64; got 'x', which is not a dtype\."),
        (dict(dtype=[1, 2]), TypeError, r"`dtype` must be float32 or float64; got \[1, 2\], which is not a dtype\."),
        (dict(dtype="complex128"), ValueError, r"`dtype` must be float32 or float64; got 'complex128'\."),
        (dict(gamma=1e308, dtype=np.float32), ValueError,
         r"`gamma` must be a finite number > 0 and at most 3\.62e\+73 for a float32 map \(its frequencies sqrt\(2 gamma\) "
         r"N\(0, 1\) would overflow float32\); got 1e\+308\."),
        (dict(n_features=1, n_components=10**12), MemoryError,
         r"random_fourier: the 1 x 1000000000000 float64 frequencies needs .* GiB but only .* of memory is available; "
         r"use fewer `n_components`\."),
        (dict(seed=-1), ValueError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got -1\."),
        (dict(seed=1.5), TypeError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got 1\.5\."),
        (dict(seed="abc"), TypeError, r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got 'abc'\."),
    ],
)
def test_random_fourier_errors(kwargs, exc, match):
    args = dict(n_features=2, n_components=4, gamma=1.0) | kwargs
    with pytest.raises(exc, match=match):
        random_fourier(**args)


def test_transform_errors():
    rff = random_fourier(2, 4, gamma=1.0, seed=0)
    with pytest.raises(ValueError, match=r"`X` must contain only finite values; got nan at index \(0, 1\)"):
        rff.transform([[0.0, np.nan]])
    with pytest.raises(ValueError, match=r"`X` must contain only finite values; got inf"):
        rff.transform([[np.inf, 0.0]])
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(as the map\); got shape \(1, 3\)\."):
        rff.transform([[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match=r"`X` must be a 2-D array"):
        rff.transform([0.0, 1.0])
    with pytest.raises(ValueError, match=r"`X` must not be empty"):
        rff.transform(np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"`X` must be a rectangular array of real numbers; got a ragged or "
                                         r"unconvertible list\."):
        rff.transform([[0.0, 1.0], [2.0]])
    with pytest.raises(TypeError, match=r"`X` must be an array of real numbers; got dtype complex128\."):
        rff.transform(np.zeros((1, 2), dtype=complex))
    with pytest.raises(ValueError, match=r"`out` must have shape \(1, 4\); got \(1, 3\)\."):
        rff.transform([[0.0, 1.0]], out=np.empty((1, 3)))
    for kind, dtype in (("cos", np.float64), ("cos_sin", np.float32)):
        m = random_fourier(2, 64, gamma=1.0, seed=0, kind=kind, dtype=dtype)
        big = np.finfo(dtype).max / 2
        with pytest.raises(ValueError, match=r"`X` is too large for this map: its projections `X @ weights` overflow "
                                             r".*\(max row norm of `X` .*, max column norm of the weights .*, drawn "
                                             r"with `gamma` = 1\.0\); rescale `X` or use a smaller `gamma`\."):
            m.transform(np.array([[big, big]], dtype=dtype))
        # huge but finite projections are fine: libm reduces them exactly
        Z = m.transform(np.array([[1e30, 0.0]], dtype=dtype))
        assert np.isfinite(Z).all()
    with pytest.raises(ValueError, match=r"`n_threads` must be a positive int"):
        rff.transform([[0.0, 1.0]], n_threads=0)


# ---------------------------------------------------------------- Nystroem
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "inverse_multiquadric"])
def test_nystroem_all_points_reproduces_the_gram_matrix(kernel, rng):
    X = rng.standard_normal((150, 3))
    ny = nystroem(X, X, kernel=kernel, gamma=0.5)
    Z = ny.transform(X)
    assert Z.shape == (150, 150) and ny.n_components == 150
    np.testing.assert_allclose(Z @ Z.T, gram(X, kernel=kernel, gamma=0.5), rtol=0, atol=1e-8)


def test_nystroem_equals_scikit_learn_and_reference(rng):
    """Same landmarks: Z Z^T equals scikit-learn Nystroem's to 1e-10 (Z itself is equal up to
    rotation); Z equals the NumPy reference (same symmetric square root) to 1e-10."""
    from sklearn.kernel_approximation import Nystroem

    X = rng.standard_normal((400, 4))
    Xq = rng.standard_normal((50, 4))
    sk = Nystroem(kernel="rbf", gamma=0.3, n_components=40, random_state=0).fit(X)
    ny = nystroem(X, sk.components_, gamma=0.3)
    Zs, Z = sk.transform(Xq), ny.transform(Xq)
    np.testing.assert_allclose(Z @ Z.T, Zs @ Zs.T, rtol=0, atol=1e-10)
    np.testing.assert_allclose(Z, reference.nystroem_transform(Xq, sk.components_, gamma=0.3), rtol=0, atol=1e-10)
    assert ny.rank == 40


def test_nystroem_landmark_methods(rng):
    X = rng.standard_normal((300, 2))
    km = nystroem(X, 20, gamma=1.0, seed=0)
    np.testing.assert_array_equal(km.landmarks, kmeans(X, 20, seed=0).centers)
    rnd = nystroem(X, 20, gamma=1.0, method="random", seed=0)
    idx = [int(np.flatnonzero((X == row).all(axis=1))[0]) for row in rnd.landmarks]
    assert len(set(idx)) == 20
    # more landmarks: a better approximation (relative Frobenius error)
    K = gram(X, gamma=1.0)
    errs = []
    for m in (5, 40):
        Z = nystroem(X, m, gamma=1.0, seed=0).transform(X)
        errs.append(np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K))
    assert errs[1] < 0.5 * errs[0]
    # alpha regularises: the approximation is K_nm (K_mm + alpha I)^-1 K_mn
    Zr = nystroem(X, X[:30], gamma=1.0, alpha=0.1).transform(X[:5])
    Kmm = gram(X[:30], gamma=1.0) + 0.1 * np.eye(30)
    Knm = gram(X[:5], X[:30], gamma=1.0)
    np.testing.assert_allclose(Zr @ Zr.T, Knm @ np.linalg.solve(Kmm, Knm.T), rtol=0, atol=1e-10)


def test_nystroem_dtype_threads_pickle(rng):
    X = rng.standard_normal((120, 3)).astype(np.float32)
    ny = nystroem(X, 15, gamma=0.5, seed=0, method="random")
    assert ny.transform(X).dtype == np.float32
    assert ny.transform(X.astype(np.float64)).dtype == np.float64
    np.testing.assert_array_equal(ny.transform(X, n_threads=1), ny.transform(X, n_threads=2))
    again = pickle.loads(pickle.dumps(ny))
    assert isinstance(again, NystroemMap)
    np.testing.assert_array_equal(again.transform(X), ny.transform(X))


def test_nystroem_errors(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match=r"`landmarks` must be an int in \[1, n_samples = 10\] or an array; got 11\."):
        nystroem(X, 11, gamma=1.0)
    with pytest.raises(ValueError, match=r"`landmarks` must be an int in \[1, n_samples = 10\] or an array; got 0\."):
        nystroem(X, 0, gamma=1.0)
    with pytest.raises(ValueError, match=r"`method` must be 'kmeans', 'random', 'rpcholesky' or 'auto'; got 'grid'\."):
        nystroem(X, 3, gamma=1.0, method="grid")
    with pytest.raises(ValueError, match=r"`method` must be None when `landmarks` is an array; got 'random'\."):
        nystroem(X, X[:3], gamma=1.0, method="random")
    with pytest.raises(ValueError, match=r"`landmarks` must have the same number of features as `X` \(2\); got 3"):
        nystroem(X, np.zeros((3, 3)), gamma=1.0)
    with pytest.raises(ValueError, match=r"`landmarks` must contain only finite values"):
        nystroem(X, np.full((3, 2), np.nan), gamma=1.0)
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0; got -1\.0\."):
        nystroem(X, 3, gamma=-1.0)
    with pytest.raises(ValueError, match=r"`alpha` must be a finite number >= 0; got -0\.5\."):
        nystroem(X, 3, gamma=1.0, alpha=-0.5)
    with pytest.raises(ValueError, match=r"`kernel` must be one of"):
        nystroem(X, 3, gamma=1.0, kernel="rbf")
    with pytest.raises(ValueError, match=r"`X` must contain only finite values"):
        nystroem(np.full((3, 2), np.inf), 2, gamma=1.0)
    ny = nystroem(X, 3, gamma=1.0, seed=0)
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(as the map\); got shape \(1, 1\)\."):
        ny.transform([[1.0]])


def test_random_fourier_dtype_none_is_the_default():
    np.testing.assert_array_equal(random_fourier(2, 4, gamma=1.0, seed=0, dtype=None).weights,
                                  random_fourier(2, 4, gamma=1.0, seed=0).weights)


@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_random_fourier_huge_gamma(kind):
    """The frequencies of gamma = 1e308 are finite in float64 (sqrt(2 gamma) without
    forming 2 gamma): the features are correct; an overflow of the projections names
    `gamma` as well as `X`."""
    rff = random_fourier(2, 10, gamma=1e308, seed=0, kind=kind)
    assert np.isfinite(rff.weights).all()
    X = np.ones((3, 2))
    np.testing.assert_allclose(rff.transform(X), _ref(rff, X), rtol=0, atol=TOL[np.float64] * 4)
    with pytest.raises(ValueError, match=r"`X` is too large for this map.*max row norm of `X` 1\.41e\+160, max column "
                                         r"norm of the weights .*e\+154, drawn with `gamma` = 1e\+308\); rescale `X` "
                                         r"or use a smaller `gamma`\."):
        rff.transform(np.full((2, 2), 1e160))
    f32 = random_fourier(2, 10, gamma=3e73, seed=0, kind=kind, dtype=np.float32)
    assert np.isfinite(f32.weights).all()


def test_nystroem_checks_memory_before_any_kmeans(rng, monkeypatch):
    def no_kmeans(*args, **kwargs):
        raise AssertionError("k-means ran before the memory check")

    monkeypatch.setattr(_approx, "kmeans_named", no_kmeans)
    with pytest.raises(MemoryError, match=r"nystroem: the 300000 x 300000 landmark kernel matrix and its "
                                          r"eigendecomposition needs 3352\.76 GiB .*; use fewer `landmarks`\."):
        nystroem(rng.random((300000, 1)), 300000, gamma=1.0)
    X = rng.random((400, 2))
    ny = nystroem(X, 100, gamma=1.0, method="random", seed=0)
    monkeypatch.setattr(_approx._v, "available_memory", lambda: 10**6)
    for landmarks in (400, X[:400]):
        with pytest.raises(MemoryError, match=r"nystroem: the 400 x 400 landmark kernel matrix"):
            nystroem(X, landmarks, gamma=1.0)
    monkeypatch.setattr(_approx._v, "available_memory", lambda: 10**5)
    with pytest.raises(MemoryError, match=r"transform: the 400 x 100 kernel block and result needs .*; transform `X` "
                                          r"in row chunks\."):
        ny.transform(X)
    # the cheap checks come first as well
    with pytest.raises(ValueError, match=r"`max_iter` must be an int >= 1; got 0\."):
        nystroem(X, 400, gamma=1.0, max_iter=0)


def test_nystroem_owns_its_landmarks(rng):
    X = rng.standard_normal((50, 2))
    L = X[:8].copy()
    ny = nystroem(X, L, gamma=0.5)
    Z = ny.transform(X)
    assert not np.shares_memory(ny.landmarks, L)
    L[:] = 0.0
    np.testing.assert_array_equal(ny.transform(X), Z)
    np.testing.assert_allclose(Z, reference.nystroem_transform(X, X[:8], gamma=0.5), rtol=0, atol=1e-10)


def test_nystroem_landmarks_errors_name_landmarks(rng):
    with pytest.raises(ValueError, match=r"`X` has fewer distinct points \(with weight > 0\) than `landmarks` \(3\)"):
        nystroem(np.ones((10, 2)), 3, gamma=1.0)
    X = rng.standard_normal((10, 2))
    # a NumPy integer is a count too
    assert nystroem(X, np.int64(3), gamma=1.0, seed=0).n_components == 3
    with pytest.raises(ValueError, match=r"`X` must be a rectangular array of real numbers; got a ragged"):
        nystroem([[0.0, 1.0], [2.0]], 1, gamma=1.0)
    with pytest.raises(ValueError, match=r"`landmarks` must be a rectangular array of real numbers; got a ragged"):
        nystroem(X, [[0.0, 1.0], [2.0]], gamma=1.0)
    with pytest.raises(ValueError, match=r"`X` must be a rectangular array of real numbers; got a ragged"):
        nystroem(X, 2, gamma=1.0, seed=0).transform([[0.0, 1.0], [2.0]])
    for coef0, exc in (("1", TypeError), (None, TypeError), (True, TypeError), (np.nan, ValueError)):
        with pytest.raises(exc, match=r"`coef0` must be a finite number; got"):
            nystroem(X, 3, gamma=1.0, kernel="polynomial", coef0=coef0)
    with pytest.raises(ValueError, match=r"`method` must be 'kmeans', 'random', 'rpcholesky' or 'auto'; got \['random'\]\."):
        nystroem(X, 3, gamma=1.0, method=["random"])
    for seed, exc in ((-1, ValueError), (1.5, TypeError), ("abc", TypeError)):
        for method in ("kmeans", "random"):
            with pytest.raises(exc, match=r"`seed` must be None, an int >= 0 or a numpy.random.Generator; got"):
                nystroem(X, 3, gamma=1.0, method=method, seed=seed)


def test_nystroem_kmeans_on_huge_and_tiny_data(rng):
    """k-means runs on the data scaled by a power of two (exact): the landmarks of large
    (squares beyond float64) or tiny data are exactly the scaled landmarks of the data
    itself.  Data whose squared distances overflow float64 are refused by name."""
    X = rng.standard_normal((60, 2))
    base = kmeans(X, 5, seed=0).centers
    for s in (2.0**400, 2.0**-600):
        ny = nystroem(X * s, 5, gamma=1.0, seed=0)
        np.testing.assert_array_equal(ny.landmarks, base * s)
        assert np.isfinite(ny.transform(X * s)).all()
    too_big = (r"must have values of magnitude at most 2\.37e\+153 \(float64 squared distances over 2 feature\(s\) "
               r"would overflow\); got \d\.\d+e\+18\d\. Rescale the data \(e\.g\. standardise it\)\.")
    with pytest.raises(ValueError, match="^`X` " + too_big):
        nystroem(X * 2.0**600, 5, gamma=1.0, seed=0)
    with pytest.raises(ValueError, match="^`landmarks` " + too_big):
        nystroem(X, X[:5] * 2.0**600, gamma=1.0)
    with pytest.raises(ValueError, match="^`X` " + too_big):
        ny.transform(X * 2.0**600)


def test_nystroem_overflow_names_the_arguments(rng):
    X = rng.standard_normal((10, 2))
    with pytest.raises(ValueError, match=r"The polynomial kernel matrix of the landmarks overflows float64 with this "
                                         r"`gamma` and `coef0` and `alpha` \(max \|landmark\| = 1\.3e\+120\); rescale "
                                         r"`landmarks` or use a smaller `gamma`\."):
        nystroem(X, np.array([[1.3e120, -1.0]]), kernel="polynomial", gamma=0.5)
    # beyond float64 squared distances: refused in the argument's name before any kernel work
    with pytest.raises(ValueError, match=r"^`landmarks` must have values of magnitude at most 2\.37e\+153 .*; got "
                                         r"1\.3e\+159\."):
        nystroem(X, np.array([[1.3e159, -1.0]]), kernel="polynomial", gamma=0.5)
    with pytest.raises(ValueError, match=r"^`X` must have values of magnitude at most 2\.37e\+153 .*; got 1\.3e\+159\."):
        nystroem(np.vstack([X, [[1.3e159, -1.0]]]), 3, kernel="polynomial", gamma=0.5, method="random", seed=0)
    with pytest.raises(ValueError, match=r"The polynomial kernel matrix of the landmarks overflows float64 .*rescale "
                                         r"`X` \(the landmarks are chosen from it\) or use a smaller `gamma`\."):
        nystroem(X, 3, kernel="polynomial", gamma=1e160, method="random", seed=0)
    ny = nystroem(X, X[:3], kernel="polynomial", gamma=0.5)
    with pytest.raises(ValueError, match=r"`X` is too large for this map: its polynomial kernel values with the "
                                         r"landmarks overflow float64 \(max \|x\| = 1e\+120\); rescale `X`\."):
        ny.transform(np.array([[1e120, 1.0]]))
    with pytest.raises(ValueError, match=r"^`X` must have values of magnitude at most 2\.37e\+153 .*; got 1e\+160\."):
        ny.transform(np.array([[1e160, 1.0]]))
    ny32 = nystroem(X.astype(np.float32), 3, kernel="polynomial", gamma=1.0, method="random", seed=0)
    q = np.array([[1e13, 1e13]], dtype=np.float32)
    assert np.isfinite(ny32.transform(q.astype(np.float64))).all()  # float64 holds it
    with pytest.raises(ValueError, match=r"`X` is too large for this map: its features overflow float32 \(max \|x\| = "
                                         r"1e\+13\); rescale `X`, or pass it as float64\."):
        ny32.transform(q)
