import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

from fastrbf import knn, knn_predict, nadaraya_watson, rbf_vote, reference
from fastrbf._jit import tiles as _jt
from fastrbf._jit.neighbors import brute as _jn
from fastrbf.neighbors import _knn


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, m, d, k", [(1, 1, 1, 1), (_jt.JB + 1, _jn.QB * 3 + 1, 3, 5), (700, 33, 16, 700), (300, 20, 70, 10)])
def test_knn_matches_reference(rng, dtype, n, m, d, k):
    X = rng.standard_normal((n, d)).astype(dtype)
    Q = rng.standard_normal((m, d)).astype(dtype)
    idx, d2 = knn(X, Q, k)
    ridx, rd2 = reference.knn(X, Q, k)
    assert idx.dtype == np.int64 and d2.dtype == dtype
    assert np.array_equal(idx, ridx)
    assert np.allclose(d2, rd2, rtol=1e-12 if dtype == np.float64 else 1e-5, atol=0)


def test_knn_matches_sklearn_brute(rng):
    X = rng.standard_normal((3000, 16))
    Q = rng.standard_normal((400, 16))
    idx, d2 = knn(X, Q, 10)
    nn = NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X)
    sd, si = nn.kneighbors(Q)
    assert np.array_equal(idx, si)
    assert np.allclose(np.sqrt(d2), sd, rtol=1e-10)


def test_knn_ties_go_to_the_lowest_index(rng):
    X = rng.integers(0, 3, size=(400, 2)).astype(np.float64)  # many exact ties
    Q = rng.integers(0, 3, size=(50, 2)).astype(np.float64)
    idx, d2 = knn(X, Q, 25)
    ridx, rd2 = reference.knn(X, Q, 25)
    assert np.array_equal(idx, ridx) and np.array_equal(d2, rd2)


def _direct_and_screened(monkeypatch, X, Q, k, **kw):
    monkeypatch.setattr(_knn, "GEMM_MIN_FEATURES", 10**9)
    direct = knn(X, Q, k, method="brute", **kw)
    monkeypatch.setattr(_knn, "GEMM_MIN_FEATURES", 1)
    return direct, knn(X, Q, k, method="brute", **kw)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d, k", [(3, 1), (5, 40), (64, 7), (300, 300)])
def test_knn_gemm_screen_has_the_bits_of_the_direct_brute_force(rng, monkeypatch, dtype, d, k):
    # many small tiles (the heap and candidate lists carried across them), offset data,
    # exact ties and all-equal points (every candidate list overflows: measured in full)
    monkeypatch.setattr(_knn, "TILE_ROWS", 8)
    monkeypatch.setattr(_knn, "TILE_COLS", 37)
    X = rng.standard_normal((1200, d)).astype(dtype)
    Q = rng.standard_normal((30, d)).astype(dtype)
    cases = [(X, Q), (X + 1000, Q + 1000), (np.round(X / 3), np.round(Q / 3)), (np.ones_like(X), np.ones_like(Q))]
    for A, B in cases:
        (i1, d1), (i2, d2) = _direct_and_screened(monkeypatch, A, B, k)
        assert np.array_equal(i1, i2) and np.array_equal(d1, d2)
        if dtype == np.float64:  # (float32 sums of 300 features order near-ties by their own rounding)
            assert np.array_equal(i2, reference.knn(A, B, k)[0])
    (i1, d1), (i2, d2) = _direct_and_screened(monkeypatch, X, Q, k, n_threads=1)
    assert np.array_equal(i1, i2) and np.array_equal(d1, d2)


def test_knn_gemm_screen_measures_few_points(rng):
    # the screen's point: only about k (1 + log(n / k)) points per query are measured
    from fastrbf import _pairwise as _pw

    n, d, k = 5000, 100, 10
    X = rng.standard_normal((n, d))
    Q = rng.standard_normal((16, d))
    Qg, Xg, nq, nx = _pw.centred(Q, X)
    G = Qg @ Xg.T
    heap = np.full((16, k), np.inf)
    cand = np.empty((16, 256), dtype=np.int64)
    lows = np.empty((16, 256))
    nc = np.zeros(16, dtype=np.int64)
    _jn.knn_screen(G, nq, nx, 0, 1e-13, 1 + 1e-13, 1 - 1e-13, heap, cand, lows, nc)
    assert np.all(nc > 0) and np.all(nc < 20 * k)
    true = np.sort(((Q[:, None, :] - X[None]) ** 2).sum(-1), axis=1)[:, k - 1]
    assert np.all(heap.max(axis=1) >= true * (1 - 1e-12))
    assert np.all(heap.max(axis=1) <= true * (1 + 1e-9))


def test_knn_threads_and_inputs(rng):
    X = rng.standard_normal((2000, 4))
    Q = rng.standard_normal((101, 4))
    X0, Q0 = X.copy(), Q.copy()
    a = knn(X, Q, 7, n_threads=1)
    b = knn(X, Q, 7, n_threads=2)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.array_equal(X, X0) and np.array_equal(Q, Q0)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_knn_predict_matches_sklearn(rng, weights):
    X = rng.standard_normal((1500, 5))
    X[100] = X[7]  # duplicates
    y = np.sin(X[:, 0]) + X[:, 1]
    Y2 = np.c_[y, X[:, 2] ** 2]
    Q = np.vstack([rng.standard_normal((200, 5)), X[:5]])  # queries on training points
    reg = KNeighborsRegressor(n_neighbors=8, weights=weights, algorithm="brute").fit(X, y)
    assert np.allclose(knn_predict(X, y, Q, 8, weights=weights), reg.predict(Q), rtol=1e-10, atol=1e-12)
    reg2 = KNeighborsRegressor(n_neighbors=8, weights=weights, algorithm="brute").fit(X, Y2)
    assert np.allclose(knn_predict(X, Y2, Q, 8, weights=weights), reg2.predict(Q), rtol=1e-10, atol=1e-12)
    lab = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    clf = KNeighborsClassifier(n_neighbors=8, weights=weights, algorithm="brute").fit(X, lab)
    assert np.array_equal(knn_predict(X, lab, Q, 8, weights=weights, classify=True), clf.predict(Q))


def test_knn_vote_ties_to_smallest_label():
    X = np.array([[0.0], [1.0], [-1.0], [2.0]])
    lab = np.array(["b", "a", "b", "a"])
    # k=3 at 0: b (0), then a (1) and b (-1) tie on distance: all three kept, b wins 2-1
    assert knn_predict(X, lab, [[0.0]], 3, classify=True).tolist() == ["b"]
    # k=2 at 0.5: b (0) and a (1) are equally near, one vote each: the smallest label
    assert knn_predict(X, lab, [[0.5]], 2, classify=True).tolist() == ["a"]
    clf = KNeighborsClassifier(n_neighbors=2, algorithm="brute").fit(X, lab)
    assert clf.predict([[0.5]]).tolist() == ["a"]


def test_rbf_vote_limit_is_nearest_neighbour(rng):
    X = rng.random((500, 2))
    lab = np.where(rng.random(500) > 0.5, "p", "n")
    Q = rng.random((300, 2))
    nearest = knn(X, Q, 1)[0][:, 0]
    # plain weights exp(-1e7 d^2) underflow for most queries: the vote is still the 1-NN
    assert np.array_equal(rbf_vote(X, lab, Q, gamma=1e7, classify=True), lab[nearest])
    lab3 = rng.integers(0, 3, 500)
    assert np.array_equal(rbf_vote(X, lab3, Q, gamma=1e7, classify=True), lab3[nearest])


def test_rbf_vote_matches_reference(rng):
    X = rng.random((400, 3))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    Q = rng.random((100, 3))
    s = reference.rbf_vote(X, y, Q, gamma=5.0)
    assert np.allclose(rbf_vote(X, y, Q, gamma=5.0), s, rtol=1e-10, atol=1e-12)
    lab = np.where(y > 0, 1, -1)
    assert np.array_equal(rbf_vote(X, lab, Q, gamma=5.0, classify=True), np.where(s > 0, 1, -1))


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nadaraya_watson_matches_reference(rng, kernel, dtype):
    X = rng.random((_jt.JB * 2 + 7, 3)).astype(dtype)
    Y = np.c_[np.sin(4 * X[:, 0]), X[:, 1]].astype(dtype)
    Q = rng.random((61, 3)).astype(dtype)
    ours = nadaraya_watson(X, Y, Q, gamma=20.0, kernel=kernel)
    ref = reference.nadaraya_watson(X, Y, Q, gamma=20.0, kernel=kernel)
    assert ours.dtype == dtype and ours.shape == (61, 2)
    assert np.allclose(ours, ref, rtol=1e-10 if dtype == np.float64 else 1e-5, atol=1e-12 if dtype == np.float64 else 1e-6)
    assert nadaraya_watson(X, Y[:, 0], Q, gamma=20.0, kernel=kernel).shape == (61,)
    a = nadaraya_watson(X, Y, Q, gamma=20.0, kernel=kernel, n_threads=1)
    b = nadaraya_watson(X, Y, Q, gamma=20.0, kernel=kernel, n_threads=2)
    assert np.array_equal(a, b)


def test_nadaraya_watson_when_every_weight_underflows(rng):
    X = rng.random((300, 2))
    y = rng.standard_normal(300)
    Q = rng.random((40, 2)) + 100.0  # far from every training point: exp(-gamma d^2) = 0
    assert np.all(np.isnan(reference.nadaraya_watson(X, y, Q, gamma=10.0)))
    nearest = knn(X, Q, 1)[0][:, 0]
    assert np.allclose(nadaraya_watson(X, y, Q, gamma=10.0), y[nearest], rtol=0, atol=1e-12)
    # exact ties among the nearest: their mean
    X2 = np.array([[0.0, 0.0], [2.0, 0.0], [5.0, 5.0]])
    assert np.allclose(nadaraya_watson(X2, [1.0, 3.0, 7.0], [[1.0, -1e4]], gamma=1e3), [2.0])


def test_bad_input(rng):
    X = rng.random((10, 2))
    y = rng.random(10)
    with pytest.raises(ValueError, match=r"`k` must be an int in \[1, n_samples\] = \[1, 10\]; got 0"):
        knn(X, X, 0)
    with pytest.raises(ValueError, match=r"`k` must be an int in \[1, n_samples\] = \[1, 10\]; got 11"):
        knn_predict(X, y, X, 11)
    with pytest.raises(ValueError, match="`Xq` must have the same number of features as `X`"):
        knn(X, np.ones((3, 3)), 1)
    with pytest.raises(ValueError, match="`Xq` must contain only finite values"):
        nadaraya_watson(X, y, [[np.nan, 0.0]], gamma=1.0)
    with pytest.raises(ValueError, match='`weights` must be "uniform" or "distance"'):
        knn_predict(X, y, X, 2, weights="gaussian")
    with pytest.raises(ValueError, match=r"`kernel` must be one of \['gaussian', 'laplacian'\]"):
        nadaraya_watson(X, y, X, gamma=1.0, kernel="cubic")
    with pytest.raises(ValueError, match="`gamma` must be a finite number > 0; got 0"):
        rbf_vote(X, y, X, gamma=0, classify=False)
    with pytest.raises(ValueError, match="`gamma` must be a finite number > 0; got -2"):
        nadaraya_watson(X, y, X, gamma=-2)
    with pytest.raises(ValueError, match=r"`Y` must have one row per row of `X` \(10\)"):
        nadaraya_watson(X, y[:5], X, gamma=1.0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        rbf_vote(X, np.ones(10), X, gamma=1.0, classify=True)


# --- any magnitude of finite input -------------------------------------------------


def test_knn_far_query_reproducer_gives_valid_nearest_indices():
    X = np.eye(3)
    idx, d2 = knn(X, [[1e160, 0.0, 0.0]], 2)
    # once rounded, the three squared distances are equal: ties to the lowest index,
    # as the reference finds on the same problem divided by 2**532 (exact scaling)
    ridx, _ = reference.knn(np.ldexp(X, -532), np.ldexp([[1e160, 0.0, 0.0]], -532), 2)
    assert np.array_equal(idx, ridx) and idx.min() >= 0
    assert np.all(np.isinf(d2))  # the true value 1e320 exceeds the float64 range
    y = np.array([1.0, 2.0, 3.0])
    assert np.array_equal(knn_predict(X, y, [[1e160, 0.0, 0.0]], 2), [y[ridx[0]].mean()])
    idx32, _ = knn(X.astype(np.float32), np.array([[2e19, 0, 0]], dtype=np.float32), 2)
    assert np.array_equal(idx32, ridx)


@pytest.mark.parametrize("dtype, exps", [(np.float64, (600, 531, -531, -900)), (np.float32, (70, -70, -120))])
def test_knn_scale_invariant_at_extreme_magnitudes(rng, dtype, exps):
    X = rng.integers(-4, 5, size=(300, 3)).astype(dtype)  # many exact ties
    X[:150] += rng.standard_normal((150, 3)).astype(dtype)
    Q = rng.standard_normal((40, 3)).astype(dtype)
    ridx, rd2 = reference.knn(X, Q, 7)
    y = rng.standard_normal(300)
    for e in exps:
        Xs = np.ldexp(X, e).astype(dtype)  # exact: the same problem at another scale
        Qs = np.ldexp(Q, e).astype(dtype)
        idx, d2 = knn(Xs, Qs, 7)
        assert np.array_equal(idx, ridx)
        with np.errstate(over="ignore", under="ignore"):
            expect = np.ldexp(rd2, 2 * e).astype(dtype)
        np.testing.assert_allclose(d2, expect, rtol=1e-12 if dtype == np.float64 else 1e-5, atol=0)
        for weights in ("uniform", "distance"):
            np.testing.assert_allclose(knn_predict(Xs, y, Qs, 7, weights=weights), knn_predict(X, y, Q, 7, weights=weights),
                                       rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("e", [531, -500, 300])
def test_nadaraya_watson_and_rbf_vote_scale_invariant(rng, kernel, e):
    X = rng.random((300, 2))
    y = rng.standard_normal(300)
    Q = rng.random((30, 2))
    lab = rng.integers(0, 3, 300)
    gamma = 20.0
    gs = np.ldexp(gamma, -2 * e)  # r -> r 2**e: gamma r^2 and sqrt(gamma) r unchanged
    Xs, Qs = np.ldexp(X, e), np.ldexp(Q, e)
    ref = reference.nadaraya_watson(X, y, Q, gamma=gamma, kernel=kernel)
    np.testing.assert_allclose(nadaraya_watson(Xs, y, Qs, gamma=gs, kernel=kernel), ref, rtol=1e-12, atol=1e-14)
    if kernel == "gaussian":
        ref_vote = reference.rbf_vote(X, y, Q, gamma=gamma)
        np.testing.assert_allclose(rbf_vote(Xs, y, Qs, gamma=gs), ref_vote, rtol=1e-10, atol=1e-14)
        onehot = np.where(lab[:, None] == np.arange(3), 1.0, -1.0)
        expect = np.argmax(reference.rbf_vote(X, onehot, Q, gamma=gamma), axis=1)
        assert np.array_equal(rbf_vote(Xs, lab, Qs, gamma=gs, classify=True), expect)


def test_far_from_the_data_at_huge_coordinates_is_the_nearest_value():
    # distances ~1e320 overflow float64; the nearest point is clearly the first
    X = np.array([[1e160, 0.0], [2e160, 0.0], [0.0, 3e160]])
    Q = np.array([[1.2e160, 1e159], [-5e159, 2.9e160]])
    y = np.array([1.0, 2.0, 3.0])
    nearest = reference.knn(X / 1e160, Q / 1e160, 1)[0][:, 0]
    for kernel in ("gaussian", "laplacian"):
        out = nadaraya_watson(X, y, Q, gamma=1.0, kernel=kernel)
        assert np.array_equal(out, y[nearest])
    assert np.array_equal(rbf_vote(X, [-1, 1, 1], Q, gamma=1.0, classify=True), np.array([-1, 1, 1])[nearest])
    assert np.array_equal(rbf_vote(X, ["a", "b", "c"], Q, gamma=1.0, classify=True), np.array(["a", "b", "c"])[nearest])
    assert np.array_equal(knn(X, Q, 1)[0][:, 0], nearest)
    # the reproducer: the first point is the nearest (exactly; once rounded the three
    # squared distances tie)
    out = nadaraya_watson(np.eye(3), [1.0, 2.0, 3.0], [[1e160, 0.0, 0.0]], gamma=1.0)
    assert np.array_equal(out, [1.0])


def _exact_far_weights(X, q, gamma, laplacian):
    """Kernel weights relative to the nearest point from exact differences of squared
    distances (fractions of the float inputs)."""
    from fractions import Fraction

    qf = [Fraction(float(v)) for v in q]
    d2 = [sum((a - Fraction(float(x))) ** 2 for a, x in zip(qf, row, strict=True)) for row in X]
    lo = min(d2)
    delta = np.array([float(v - lo) for v in d2])
    if laplacian:
        h = max(0, (lo.numerator.bit_length() - lo.denominator.bit_length()) // 2)  # no overflow
        r = np.sqrt(np.array([float(v / 4**h) for v in d2])) * 2.0**h
        delta = delta / (r + r[d2.index(lo)])
        return np.exp(-np.sqrt(gamma) * delta)
    return np.exp(-gamma * delta)


@pytest.mark.parametrize("dtype, far", [(np.float64, 1e17), (np.float64, 1e160), (np.float32, 1e8), (np.float32, 3e19)])
def test_nadaraya_watson_far_queries_are_the_nearest_value(rng, dtype, far):
    # far away every x - x_j rounds alike and the plain squared distances tie (they used
    # to give the mean of all the targets); the nearest point is decided exactly
    X = rng.standard_normal((40, 2)).astype(dtype)
    y = rng.standard_normal(40)
    Q = np.array([[far, far], [-far, 0.5 * far], [3.0, far]], dtype=dtype)
    for kernel in ("gaussian", "laplacian"):
        expect = np.empty(len(Q))
        for i, q in enumerate(Q):
            w = _exact_far_weights(X, q, 1.0, kernel == "laplacian")
            expect[i] = w @ y / w.sum()
        out = nadaraya_watson(X, y, Q, gamma=1.0, kernel=kernel)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, expect, rtol=1e-9, atol=0)
        f, grad = nadaraya_watson(X, y, Q, gamma=1.0, kernel=kernel, return_grad=True)
        assert np.array_equal(f, out) and np.all(np.isfinite(grad))
        if kernel == "gaussian":
            assert np.array_equal(grad, np.zeros_like(grad))  # one point weighs: piecewise constant
            nearest = np.array([np.argmax(_exact_far_weights(X, q, 1.0, False)) for q in Q])
            assert np.array_equal(out, y[nearest])
            assert np.array_equal(rbf_vote(X, y > 0, Q, gamma=1.0, classify=True), (y > 0)[nearest])


def test_nadaraya_watson_far_near_ties_keep_their_weights():
    # two points at nearly the same distance from a far query: both weigh, as exactly
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 5.0]])
    y = np.array([1.0, 3.0, 7.0])
    q = np.array([[0.5, 1e17]])
    for kernel, gamma in (("gaussian", 1e-17), ("laplacian", 1e-4)):
        w = _exact_far_weights(X, q[0], gamma, kernel == "laplacian")
        assert 1e-6 < w.min() < 0.99
        np.testing.assert_allclose(nadaraya_watson(X, y, q, gamma=gamma, kernel=kernel), [w @ y / w.sum()], rtol=1e-9)


def test_nadaraya_watson_huge_targets_do_not_overflow(rng):
    X = rng.random((200, 2))
    y = rng.standard_normal(200)
    Q = rng.random((20, 2))
    big = nadaraya_watson(X, y * 2.0**1020, Q, gamma=0.5)
    np.testing.assert_allclose(big, np.ldexp(reference.nadaraya_watson(X, y, Q, gamma=0.5), 1020), rtol=1e-12)
    tiny = nadaraya_watson(X, y * 2.0**-1060, Q, gamma=0.5)  # subnormal targets
    assert np.all(np.isfinite(tiny))
    assert np.array_equal(knn_predict(X, np.full(200, 1.7e308), Q, 9), np.full(20, 1.7e308))


def test_float32_kept_end_to_end(rng):
    X = rng.random((100, 2)).astype(np.float32)
    Q = rng.random((10, 2)).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    out = rbf_vote(X, y, Q, gamma=3.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, reference.rbf_vote(X.astype(np.float64), y.astype(np.float64), Q.astype(np.float64),
                                                       gamma=3.0), rtol=1e-5, atol=1e-6)
    assert rbf_vote(X, y.astype(np.float64), Q, gamma=3.0).dtype == np.float64
    assert rbf_vote(X.astype(np.float64), y, Q, gamma=3.0).dtype == np.float64
    assert nadaraya_watson(X, y, Q, gamma=3.0).dtype == np.float32
    assert knn_predict(X, y, Q, 3).dtype == np.float32
    assert knn(X, Q, 3)[1].dtype == np.float32


def _call(fn, X, Y, Xq):
    if fn is knn:
        return knn(X, Xq, 1)
    if fn is knn_predict:
        return knn_predict(X, Y, Xq, 1)
    return fn(X, Y, Xq, gamma=1.0)


@pytest.mark.parametrize("fn", [knn, knn_predict, nadaraya_watson, rbf_vote])
def test_messages_name_the_arguments_as_passed(rng, fn):
    X = rng.random((10, 2))
    y = rng.random(10)
    with pytest.raises(ValueError, match=r"`Xq` must have the same number of features as `X` \(2\); got 3"):
        _call(fn, X, y, np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"`Xq` must contain only finite values; got nan"):
        _call(fn, X, y, [[np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"`X` must contain only finite values; got inf"):
        _call(fn, np.r_[X[:9], [[np.inf, 0.0]]], y, X)
    with pytest.raises(ValueError, match=r"`Xq` must be a 2-D array"):
        _call(fn, X, y, [1.0, 2.0])
    with pytest.raises(TypeError, match=r"`Xq` must be an array of real numbers; got dtype <U1"):
        _call(fn, X, y, [["a", "b"]])
    if fn is not knn:
        with pytest.raises(ValueError, match=r"`Y` must have one row per row of `X` \(10\); got shape \(9,\)"):
            _call(fn, X, y[:9], X)


@pytest.mark.parametrize("fn", [knn, knn_predict, nadaraya_watson, rbf_vote])
@pytest.mark.parametrize("n_threads, exc", [(0, ValueError), ("2", TypeError), (True, TypeError), (2.0, TypeError)])
def test_bad_n_threads(rng, fn, n_threads, exc):
    X = rng.random((10, 2))
    with pytest.raises(exc, match=r"`n_threads` must be"):
        if fn is knn:
            knn(X, X, 1, n_threads=n_threads)
        elif fn is knn_predict:
            knn_predict(X, X[:, 0], X, 1, n_threads=n_threads)
        else:
            fn(X, X[:, 0], X, gamma=1.0, n_threads=n_threads)


def test_bad_parameter_types(rng):
    X = rng.random((10, 2))
    y = rng.random(10)
    with pytest.raises(TypeError, match=r"`k` must be an int in \[1, n_samples\] = \[1, 10\]; got 2.0"):
        knn(X, X, 2.0)
    with pytest.raises(TypeError, match=r"`k` must be an int in \[1, n_samples\] = \[1, 10\]; got True"):
        knn_predict(X, y, X, True)
    with pytest.raises(TypeError, match=r"`classify` must be True or False; got 'yes'"):
        knn_predict(X, y, X, 2, classify="yes")
    with pytest.raises(TypeError, match=r"`classify` must be True or False; got 1"):
        rbf_vote(X, y, X, gamma=1.0, classify=1)
    with pytest.raises(TypeError, match=r"`gamma` must be a finite number > 0; got 'abc'"):
        nadaraya_watson(X, y, X, gamma="abc")
    with pytest.raises(TypeError, match=r"`gamma` must be a finite number > 0; got \[1.0\]"):
        rbf_vote(X, y, X, gamma=[1.0])
    with pytest.raises(TypeError, match=r"`gamma` must be a finite number > 0; got True"):
        rbf_vote(X, y, X, gamma=True)
    with pytest.raises(ValueError, match=r"`gamma` must be a finite number > 0; got nan"):
        nadaraya_watson(X, y, X, gamma=float("nan"))
    with pytest.raises(ValueError, match=r'`weights` must be "uniform" or "distance"; got \[1\]'):
        knn_predict(X, y, X, 2, weights=[1])
    with pytest.raises(ValueError, match=r"`kernel` must be one of \['gaussian', 'laplacian'\]; got None"):
        nadaraya_watson(X, y, X, gamma=1.0, kernel=None)


def test_memory_error_before_allocating(rng, monkeypatch):
    from fastrbf import _validation

    X = rng.random((50, 2))
    monkeypatch.setattr(_validation, "available_memory", lambda: 10_000)
    with pytest.raises(MemoryError, match=r"knn with k=50 for 50 query points needs .* GiB .* query in batches"):
        knn(X, X, 50)
    with pytest.raises(MemoryError, match=r"knn_predict with k=50 for 50 query points needs .* predict in batches"):
        knn_predict(X, X[:, 0], X, 50)
    with pytest.raises(MemoryError, match=r"rbf_vote with 50 classes needs .* use fewer classes in `Y`"):
        rbf_vote(X, np.arange(50), X, gamma=1.0, classify=True)
