import numpy as np
import pytest
import scipy.linalg

from fastrbf import CholeskyFactor, NotPositiveDefiniteError, cholesky, gram, reference, solve_regularized
from fastrbf import linalg as fl


def _spd(rng, n, gamma=3.0, dtype=np.float64):
    X = rng.random((n, 3))
    return gram(X, gamma=gamma).astype(dtype)


def _rel(a, b):
    return np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max()


@pytest.mark.parametrize("n", [1, 2, 65, 257])
@pytest.mark.parametrize("ycols", [None, 1, 3])
@pytest.mark.parametrize("alpha_kind", ["scalar", "vector"])
def test_solve_matches_reference_and_scipy(rng, n, ycols, alpha_kind):
    K = _spd(rng, n)
    alpha = 1e-3 if alpha_kind == "scalar" else rng.uniform(1e-3, 1e-2, n)
    Y = rng.standard_normal(n) if ycols is None else rng.standard_normal((n, ycols))
    f = cholesky(K, alpha=alpha)
    W = f.solve(Y)
    assert W.shape == Y.shape and W.dtype == np.float64
    A = K + np.diag(np.broadcast_to(alpha, (n,)))
    assert _rel(W, reference.solve_regularized(K, Y, alpha=alpha)) < 1e-8
    assert _rel(W, scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), Y)) < 1e-10
    assert np.isclose(f.logdet(), np.linalg.slogdet(A)[1], rtol=1e-10, atol=1e-10)
    assert f.jitter == 0.0 and f.n == n
    assert _rel(solve_regularized(K, Y, alpha=alpha), W) == 0.0


def test_input_not_modified_and_overwrite_in_place(rng):
    K = _spd(rng, 100)
    keep = K.copy()
    f = cholesky(K, alpha=1e-4)
    assert np.array_equal(K, keep)
    y = rng.standard_normal(100)
    for layout in ("C", "F"):
        K2 = np.array(keep, order=layout)
        g = cholesky(K2, alpha=1e-4, overwrite=True)
        assert np.shares_memory(g.factor, K2)
        assert np.array_equal(g.solve(y), f.solve(y))
    # overwrite cannot apply to float32 input with a float64 factorisation: K is kept
    K32 = keep.astype(np.float32)
    k32 = K32.copy()
    cholesky(K32, alpha=1e-4, overwrite=True)
    assert np.array_equal(K32, k32)


def test_float32(rng):
    K = _spd(rng, 80, dtype=np.float32)
    y = rng.standard_normal(80).astype(np.float32)
    f = cholesky(K, alpha=1e-3)
    assert f.factor.dtype == np.float64 and f.dtype == np.float32
    w = f.solve(y)
    assert w.dtype == np.float32
    assert f.solve(y.astype(np.float64)).dtype == np.float64
    ref = reference.solve_regularized(K.astype(np.float64), y.astype(np.float64), alpha=1e-3)
    assert _rel(w, ref) < 1e-5
    g = cholesky(K, alpha=1e-3, dtype=np.float32)
    assert g.factor.dtype == np.float32
    assert _rel(g.solve(y), ref) < 1e-2  # a float32 factorisation of a Gram matrix: few digits
    K2 = K.copy()
    h = cholesky(K2, alpha=1e-3, dtype=np.float32, overwrite=True)
    assert np.shares_memory(h.factor, K2)


def test_not_positive_definite_error(rng):
    X = rng.random((30, 2))
    X[7] = X[3]  # a duplicate point: singular Gram matrix
    K = gram(X, gamma=2.0)
    pattern = r"broke down at column \d+ \(alpha = 0\).*larger `alpha`.*jitter=\"auto\".*duplicate"
    with pytest.raises(NotPositiveDefiniteError, match=pattern) as exc:
        cholesky(K)
    assert isinstance(exc.value, np.linalg.LinAlgError)
    assert 7 <= exc.value.column < 30 and exc.value.alpha == 0.0
    with pytest.raises(NotPositiveDefiniteError, match="broke down at column 1"):
        cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]), alpha=0.5)
    with pytest.raises(NotPositiveDefiniteError, match="jitter up to"):
        cholesky(-np.eye(3), jitter="auto")


def test_jitter_auto_in_place_retry(rng):
    K = gram(rng.random((40, 2)), gamma=2.0) - 1e-7 * np.eye(40)  # indefinite
    keep = K.copy()
    f = cholesky(K, jitter="auto")
    assert np.array_equal(K, keep)
    mean_diag = np.mean(np.diag(K))
    assert f.jitter in [j * mean_diag for j in fl.JITTER_LADDER]
    assert f.jitter >= 1e-8  # the smaller rungs failed
    # the retry undid the failed try in place: same factor as a fresh factorisation
    K2 = keep.copy()
    g = cholesky(K2, jitter="auto", overwrite=True)
    assert g.jitter == f.jitter and np.shares_memory(g.factor, K2)
    fresh = cholesky(keep, alpha=f.jitter)
    y = rng.standard_normal(40)
    assert np.array_equal(g.solve(y), fresh.solve(y))
    assert np.array_equal(f.solve(y), fresh.solve(y))
    # a fixed jitter is added as well
    assert cholesky(keep, jitter=1e-6).jitter == 1e-6
    # no jitter needed: none recorded
    assert cholesky(_spd(rng, 10), alpha=1e-3, jitter="auto").jitter == 0.0


def test_threads_agree(rng):
    # LAPACK with 1 or 2 BLAS threads may differ in the last bits (blocking), not more
    K = _spd(rng, 300)
    y = rng.standard_normal((300, 2))
    a = cholesky(K, alpha=1e-2, n_threads=1).solve(y, n_threads=1)
    b = cholesky(K, alpha=1e-2, n_threads=2).solve(y, n_threads=2)
    assert _rel(a, b) < 1e-10


@pytest.mark.parametrize(
    "K, kwargs, exc, match",
    [
        (np.ones((3, 2)), {}, ValueError, r"`K` must be a square matrix; got shape \(3, 2\)"),
        (np.array([[1.0, 0.5], [0.4, 1.0]]), {}, ValueError, r"`K` must be symmetric; got max \|K - K.T\| = 0.1"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), {}, ValueError, "`K` must contain only finite values"),
        (np.eye(2), {"alpha": -1.0}, ValueError, r"`alpha` must be finite and >= 0; got -1.0"),
        (np.eye(2), {"alpha": [1.0, 2.0, 3.0]}, ValueError, r"`alpha` must be a scalar or have one value per row \(2\)"),
        (np.eye(2), {"alpha": "big"}, TypeError, "`alpha` must be a number or a 1-D array"),
        (np.eye(2), {"jitter": "more"}, ValueError, '`jitter` must be None, "auto" or a number'),
        (np.eye(2), {"dtype": np.int32}, ValueError, "`dtype` must be float64 or float32"),
        (np.zeros((0, 0)), {}, ValueError, "`K` must not be empty"),
    ],
)
def test_bad_input(K, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        cholesky(K, **kwargs)


def test_solve_bad_y(rng):
    f = cholesky(np.eye(3))
    with pytest.raises(ValueError, match=r"`Y` must have one row per row of the matrix \(3\); got shape \(4,\)"):
        f.solve(np.ones(4))
    with pytest.raises(ValueError, match="`Y` must contain only finite values"):
        f.solve([1.0, np.inf, 0.0])
    assert isinstance(f, CholeskyFactor)


def test_symmetry_check_tolerates_rounding(rng):
    A = rng.standard_normal((50, 50))
    K = A @ A.T + 50 * np.eye(50)
    K[3, 4] *= 1 + 1e-14  # rounding-level asymmetry is accepted
    cholesky(K)


def test_numerically_singular_is_a_breakdown():
    # potrf completes, but the second pivot (2.2e-16) is below the rounding level
    K = np.array([[1.0, 1.0 - 1e-16], [1.0 - 1e-16, 1.0]])
    with pytest.raises(NotPositiveDefiniteError, match="column 1 .*below the rounding level") as exc:
        cholesky(K)
    assert exc.value.column == 1
    f = cholesky(K, jitter="auto")
    assert f.jitter > 0
    assert np.all(np.isfinite(f.solve([1.0, 1.0])))


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint16, np.bool_, np.float16, ">f8", ">f4", "<f2"])
def test_every_real_dtype_is_accepted(rng, dtype):
    # documented as valid: integers, bools and float16 become float64, byte-swapped
    # floats native (float32 kept)
    A = rng.integers(0, 3, (6, 6))
    K = (A @ A.T + 6 * np.eye(6, dtype=np.int64)).astype(dtype) if dtype != np.bool_ else np.eye(6, dtype=bool)
    K0 = K.copy()
    y = rng.standard_normal(6)
    expected = np.linalg.solve(K.astype(np.float64) + 0.5 * np.eye(6), y)
    f = cholesky(K, alpha=0.5)
    assert f.dtype == (np.float32 if np.dtype(dtype) == np.dtype(">f4") else np.float64)
    np.testing.assert_allclose(f.solve(y), expected, rtol=1e-12)
    np.testing.assert_allclose(solve_regularized(K, y, alpha=0.5), expected, rtol=1e-12)
    np.testing.assert_allclose(f.logdet(), np.linalg.slogdet(K.astype(np.float64) + 0.5 * np.eye(6))[1], rtol=1e-12)
    assert np.array_equal(K, K0) and K.dtype == K0.dtype
    # a byte-swapped right-hand side too
    np.testing.assert_allclose(f.solve(y.astype(">f8")), expected, rtol=1e-12)


def test_ragged_and_bad_types_are_named():
    with pytest.raises(ValueError, match=r"`K` must be a rectangular array of real numbers; got a ragged or unconvertible list"):
        cholesky([[1.0, 0.0], [0.0]])
    with pytest.raises(ValueError, match=r"`Y` must be a rectangular array of real numbers; got a ragged or unconvertible list"):
        solve_regularized(np.eye(2), [[1.0], [2.0, 3.0]], alpha=0.0)
    with pytest.raises(ValueError, match=r"`alpha` must be a rectangular array of real numbers; got a ragged"):
        cholesky(np.eye(2), alpha=[[1.0], [2.0, 3.0]])
    with pytest.raises(TypeError, match=r"`dtype` must be float64 or float32; got 'nonsense'"):
        cholesky(np.eye(2), dtype="nonsense")


def test_check_conditioning_leaves_the_factor_intact(rng):
    K = _spd(rng, 40, gamma=30.0)
    B = np.array(K, order="C")
    F, _ = fl.factor_in_place(B, 1e-3, None, None)
    F0 = F.copy()
    Y = rng.standard_normal((40, 2))
    W = scipy.linalg.cho_solve((F, True), Y)
    fl.check_conditioning(F, np.diag(K) + 1e-3, W, Y, what="K", remedies="none")
    assert np.array_equal(F, F0)
    # the 1-norm from the stored triangle is the 1-norm of the matrix
    A = K + 1e-3 * np.eye(40)
    U = np.array(np.triu(A), order="F")
    assert np.isclose(fl._sym_norm1_upper(U, block=7), np.abs(A).sum(axis=0).max(), rtol=1e-14)


def test_ranges_and_overflowing_solutions():
    with pytest.raises(ValueError, match=r"The solution of \(K \+ alpha I\) W = Y overflows float64 for these `K`, "
                                         r"`alpha` and `Y` .*rescale `Y` \(or `K`\), or use a larger `alpha`"):
        cholesky(np.eye(2) * 1e-300).solve([1e10, 1.0])
    with pytest.raises(ValueError, match=r"The solution of .* overflows float32"):
        cholesky(np.eye(2, dtype=np.float32) * np.float32(1e-30)).solve(np.array([1e10, 1.0], np.float32))
    with pytest.raises(ValueError, match=r"`K` must have values of magnitude at most 8.51e\+37 for a float32 "
                                         r"factorisation; got 1e\+39"):
        cholesky(np.eye(2) * 1e39, dtype=np.float32)
    with pytest.raises(ValueError, match=r"`K` \(with `alpha` added\) must have values of magnitude at most .* "
                                         r"float32 factorisation"):
        cholesky(np.eye(2), alpha=1e39, dtype=np.float32)
    with pytest.raises(ValueError, match=r"`Y` must have values of magnitude at most .* float32 factorisation"):
        cholesky(np.eye(2), dtype=np.float32).solve([1e39, 0.0])
    # the same in float64 is fine
    np.testing.assert_allclose(cholesky(np.eye(2) * 1e39).solve([1e39, 0.0]), [1.0, 0.0], rtol=1e-15)
