import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

from fastrbf import knn, knn_predict, nadaraya_watson, rbf_vote, reference
from fastrbf._jit import distances as _jd
from fastrbf._jit import neighbors as _jn


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, m, d, k", [(1, 1, 1, 1), (_jd.JB + 1, _jn.QB * 3 + 1, 3, 5), (700, 33, 16, 700), (300, 20, 70, 10)])
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
    X = rng.random((_jd.JB * 2 + 7, 3)).astype(dtype)
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
