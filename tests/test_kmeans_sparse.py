"""k-means on scipy.sparse input: equal to the densified data and to scikit-learn.

The sparse assignment is exact (the argmin of the float64 direct-difference distances,
ties to the lowest index), as the dense path.  scikit-learn ranks the centres by the
expanded form in the data's dtype, which can flip a near-tie: the random data here
have none at float32 resolution, and the ties they hold (duplicated rows taken as
initial centres) are exact in every form.

Tolerances: float64 centres are the same sums divided by the same weights as on the
densified data (bitwise, see :mod:`fastrbf._jit.cluster.sparse`), so 1e-12 relative is
slack; float32 centres are the float32 rounding of the same float64 means, so equal
to float32 resolution (``eps32``).  scikit-learn sums float32 data in float32, so its
float32 centres differ from the exact means by about ``n eps32`` relative.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

import fastrbf
from fastrbf import _threads, reference
from fastrbf._jit.cluster import lloyd as _jl
from fastrbf._sparse import check_csr
from fastrbf.cluster._seeding import random_init

DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-12, np.float32: float(np.finfo(np.float32).eps)}


def sparse_data(rng, n, d, density, dtype, index_dtype=np.int32, dup_rows=0):
    """Random CSR data with empty rows and ``dup_rows`` duplicated rows."""
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.data = (X.data * 4 - 2).astype(dtype)  # signed values
    X = X.astype(dtype)
    if dup_rows:
        rows = rng.choice(n, dup_rows, replace=False)
        D = X.toarray()
        D[rows[1:]] = D[rows[0]]
        X = sp.csr_matrix(D)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


def messy(X, rng):
    """The same matrix with unsorted indices, duplicate entries (x = x/2 + x/2, exact)
    and explicit zeros."""
    data, indices, indptr = [], [], [0]
    for i in range(X.shape[0]):
        p0, p1 = X.indptr[i], X.indptr[i + 1]
        v, j = list(X.data[p0:p1]), list(X.indices[p0:p1])
        if v:
            v = [v[0] / 2, v[0] / 2, *v[1:]]
            j = [j[0], *j]
        if i % 3 == 0:
            v.append(0.0)
            j.append(int(rng.integers(X.shape[1])))
        order = rng.permutation(len(v))
        data += [v[o] for o in order]
        indices += [j[o] for o in order]
        indptr.append(len(data))
    M = sp.csr_matrix((np.array(data, dtype=X.dtype), np.array(indices, dtype=X.indices.dtype),
                       np.array(indptr, dtype=X.indptr.dtype)), shape=X.shape)
    assert not M.has_canonical_format
    return M


def init_rows(X, rng, K):
    return X[rng.choice(X.shape[0], K, replace=False)].toarray()


# ---------------------------------------------------------------- kmeans
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("density", [0.01, 0.1, 0.3])
def test_kmeans_equals_dense_and_sklearn(rng, dtype, index_dtype, density):
    from sklearn.cluster import KMeans

    X = sparse_data(rng, 700, 60, density, dtype, index_dtype)
    C = init_rows(X, rng, 7)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    res = fastrbf.kmeans(X, 7, init=C, sample_weight=w, tol=1e-4)
    dense = fastrbf.kmeans(X.toarray(), 7, init=C, sample_weight=w, tol=1e-4)
    assert res.centers.dtype == dtype and res.labels.dtype == np.int64
    assert_array_equal(res.labels, dense.labels)
    assert_allclose(res.centers, dense.centers, rtol=RTOL[dtype], atol=0)
    assert res.n_iter == dense.n_iter and res.converged == dense.converged
    assert res.inertia == pytest.approx(dense.inertia, rel=1e-12 if dtype == np.float64 else 1e-6)
    X32 = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    sk = KMeans(7, init=C, n_init=1, algorithm="lloyd", tol=1e-4).fit(X32, sample_weight=w)  # int32 indices only
    assert_array_equal(res.labels, sk.labels_)
    assert res.n_iter == sk.n_iter_
    if dtype == np.float64:
        assert_allclose(res.centers, sk.cluster_centers_, rtol=1e-10, atol=1e-12)
        assert res.inertia == pytest.approx(sk.inertia_, rel=1e-10)
    else:  # scikit-learn's float32 sums
        assert_allclose(res.centers, sk.cluster_centers_, rtol=0, atol=X.shape[0] * 2e-7)
        assert res.inertia == pytest.approx(sk.inertia_, rel=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_kmeans_unsorted_indices_duplicates_explicit_zeros(rng, dtype):
    X = sparse_data(rng, 500, 30, 0.2, dtype)
    M = messy(X, rng)
    C = init_rows(X, rng, 5)
    saved = [M.data.copy(), M.indices.copy(), M.indptr.copy()]
    res = fastrbf.kmeans(M, 5, init=C, tol=0)
    ref = fastrbf.kmeans(X, 5, init=C, tol=0)
    for a, b in zip(saved, [M.data, M.indices, M.indptr], strict=True):
        assert_array_equal(a, b)  # the caller's arrays are untouched
    assert_array_equal(res.labels, ref.labels)
    assert_array_equal(res.centers, ref.centers)
    assert res.n_iter == ref.n_iter
    dense = fastrbf.kmeans(M.toarray(), 5, init=C, tol=0)
    assert_array_equal(res.labels, dense.labels)


def test_kmeans_ties_from_duplicated_rows_and_relocation(rng):
    """Duplicated rows taken as initial centres: every point ties between the two
    centres (lowest index wins), the other cluster empties and is relocated."""
    D = sparse_data(rng, 400, 20, 0.3, np.float64).toarray()
    D[0, 0] = 1.5
    D[7] = D[0]
    X = sp.csr_matrix(D)
    C = np.vstack([D[0], D[7], init_rows(X, rng, 4)])
    labels, _ = fastrbf.lloyd_assign(X, C)
    assert not np.any(labels == 1)  # the tie goes to centre 0
    res = fastrbf.kmeans(X, 6, init=C, tol=0)
    dense = fastrbf.kmeans(D, 6, init=C, tol=0)
    assert_array_equal(res.labels, dense.labels)
    assert_allclose(res.centers, dense.centers, rtol=1e-12)
    assert res.n_iter == dense.n_iter
    assert np.bincount(res.labels, minlength=6).min() > 0
    with pytest.raises(fastrbf.EmptyClusterError, match=r"cluster\(s\) \[1\] became empty at iteration 1"):
        fastrbf.kmeans(X, 6, init=C, empty="raise")


@pytest.mark.parametrize("dtype", DTYPES)
def test_kmeans_plusplus_seeding_and_formats(rng, dtype):
    X = sparse_data(rng, 900, 25, 0.15, dtype)
    res = fastrbf.kmeans(X, 6, seed=3, n_init=2)
    dense = fastrbf.kmeans(X.toarray(), 6, seed=3, n_init=2)
    assert_array_equal(res.labels, dense.labels)
    assert_allclose(res.centers, dense.centers, rtol=RTOL[dtype], atol=0)
    for other in (sp.csc_matrix(X), sp.coo_matrix(X), sp.csr_array(X), sp.lil_matrix(X)):
        again = fastrbf.kmeans(other, 6, seed=3, n_init=2)
        assert_array_equal(again.labels, res.labels)
        assert_array_equal(again.centers, res.centers)


def test_kmeans_random_init_picks_distinct_rows(rng):
    X = sparse_data(rng, 300, 10, 0.1, np.float64, dup_rows=50)
    rows = check_csr(X, "X")
    C = random_init(rows, 4, np.ones(300), np.random.default_rng(1))
    assert len({c.tobytes() for c in C}) == 4
    D = X.toarray()
    assert all((D == c).all(axis=1).any() for c in C)
    res = fastrbf.kmeans(X, 4, init="random", seed=1, max_iter=1)
    again = fastrbf.kmeans(X, 4, init="random", seed=1, max_iter=1)
    assert_array_equal(res.centers, again.centers)
    with pytest.raises(ValueError, match=r"fewer distinct points \(with weight > 0\) than `n_clusters`"):
        fastrbf.kmeans(sp.csr_matrix(np.ones((5, 3))), 2, init="random")
    with pytest.raises(ValueError, match=r"fewer distinct points \(with weight > 0\) than `n_clusters` \(2\)"):
        fastrbf.kmeans(sp.csr_matrix(np.ones((5, 3))), 2, init=np.eye(2, 3))


# ---------------------------------------------------------------- the steps
@pytest.mark.parametrize("dtype", DTYPES)
def test_lloyd_steps_and_seeding_equal_dense(rng, dtype):
    X = sparse_data(rng, 800, 40, 0.1, dtype, np.int64)
    D = X.toarray()
    C = init_rows(X, rng, 9)
    labels, d2 = fastrbf.lloyd_assign(X, C)
    dl, dd2 = fastrbf.lloyd_assign(D, C)
    assert d2.dtype == dtype
    assert_array_equal(labels, dl)
    assert_allclose(d2, dd2, rtol=1e-10 if dtype == np.float64 else 1e-5, atol=1e-10)
    w = rng.uniform(0.0, 3.0, X.shape[0])
    centers, counts = fastrbf.lloyd_update(X, labels, 9, sample_weight=w)
    dc, dcounts = fastrbf.lloyd_update(D, labels, 9, sample_weight=w)
    assert centers.dtype == dtype
    assert_array_equal(centers, dc)
    assert_array_equal(counts, dcounts)
    cs, idx = fastrbf.kmeans_plusplus(X, 9, seed=11, sample_weight=w)
    dcs, didx = fastrbf.kmeans_plusplus(D, 9, seed=11, sample_weight=w)
    assert_array_equal(idx, didx)
    assert cs.dtype == dtype
    assert_array_equal(cs, dcs)


def test_assign_exact_where_the_expanded_form_cannot_decide(rng):
    """Rows far from the origin and centres closer than the expanded form resolves."""
    d = 30
    base = np.zeros(d)
    base[:5] = 1e7
    C = base + 1e-6 * rng.standard_normal((20, d))
    D = base + 1e-6 * rng.standard_normal((200, d))
    D[:, 10:] = 0.0
    C[:, 10:] = 0.0
    labels, _ = fastrbf.lloyd_assign(sp.csr_matrix(D), C)
    ref_labels, _ = reference.lloyd_assign(D, C)
    assert_array_equal(labels, ref_labels)


def test_empty_rows_and_all_zero_matrix(rng):
    D = np.zeros((50, 8))
    D[3, 2] = 1.0
    X = sp.csr_matrix(D)
    labels, d2 = fastrbf.lloyd_assign(X, np.array([[0.0] * 8, [1.0] * 8]))
    assert labels.tolist() == [0] * 50 and d2[3] == 1.0 and d2.sum() == 1.0
    res = fastrbf.kmeans(X, 2, seed=0)
    assert sorted(np.bincount(res.labels).tolist()) == [1, 49] and res.inertia == 0.0
    zero = fastrbf.kmeans(sp.csr_matrix((6, 3), dtype=np.float32), 1)  # no stored entry at all
    assert zero.centers.dtype == np.float32 and not zero.centers.any() and zero.inertia == 0.0


# ---------------------------------------------------------------- threads, inputs
def test_bitwise_same_for_one_and_two_threads(rng, monkeypatch):
    monkeypatch.setattr(_threads, "SERIAL_WORK", 0)  # parallel however small
    monkeypatch.setattr(_jl, "UPDATE_CHUNK", 97)  # many update slots
    X = sparse_data(rng, 9000, 30, 0.05, np.float32)
    w = rng.uniform(0.1, 1.0, X.shape[0])
    saved = [X.data.copy(), X.indices.copy(), X.indptr.copy()]
    a = fastrbf.kmeans(X, 12, seed=4, sample_weight=w, n_threads=1)
    b = fastrbf.kmeans(X, 12, seed=4, sample_weight=w, n_threads=2)
    assert_array_equal(a.labels, b.labels)
    assert_array_equal(a.centers, b.centers)
    assert a.inertia == b.inertia and a.n_iter == b.n_iter
    for f in (fastrbf.lloyd_assign, lambda X, C, n_threads: fastrbf.lloyd_update(X, a.labels, 12, n_threads=n_threads)):
        for x, y in zip(f(X, a.centers, n_threads=1), f(X, a.centers, n_threads=2), strict=True):
            assert_array_equal(x, y)
    for x, y in zip(fastrbf.kmeans_plusplus(X, 12, seed=2, n_threads=1),
                    fastrbf.kmeans_plusplus(X, 12, seed=2, n_threads=2), strict=True):
        assert_array_equal(x, y)
    for s, now in zip(saved, [X.data, X.indices, X.indptr], strict=True):
        assert_array_equal(s, now)


def test_huge_and_tiny_values_are_scaled(rng):
    X = sparse_data(rng, 200, 10, 0.3, np.float64)
    C = init_rows(X, rng, 3)
    base = fastrbf.kmeans(X, 3, init=C, tol=0)
    for e in (300, -300):
        big = fastrbf.kmeans(X * 2.0**e, 3, init=C * 2.0**e, tol=0)
        assert_array_equal(big.labels, base.labels)
        assert_array_equal(big.centers, base.centers * 2.0**e)


# ---------------------------------------------------------------- errors
def test_bad_sparse_inputs_raise_naming_the_argument(rng):
    X = sparse_data(rng, 20, 4, 0.5, np.float64)
    bad = X.copy()
    bad.data[3] = np.nan
    row = int(np.searchsorted(bad.indptr, 3, side="right")) - 1
    with pytest.raises(ValueError, match=rf"`X` must contain only finite values; got nan at index \({row}, "):
        fastrbf.kmeans(bad, 2)
    with pytest.raises(ValueError, match=r"`X` must not be empty; got shape \(0, 4\)"):
        fastrbf.kmeans(sp.csr_matrix((0, 4)), 2)
    one_d = sp.csr_array(np.ones(3))
    if one_d.ndim == 1:  # SciPy >= 1.13 has 1-D sparse arrays (older ones make this (1, 3))
        with pytest.raises(ValueError, match=r"`X` must be a 2-D array of shape \(n_samples, n_features\); got shape"):
            fastrbf.lloyd_assign(one_d, np.ones((1, 3)))
    with pytest.raises(TypeError, match=r"`X` must be an array of real numbers; got dtype complex128"):
        fastrbf.lloyd_update(sp.csr_matrix(np.ones((3, 2), dtype=complex)), [0, 0, 0], 1)
    with pytest.raises(ValueError, match=r"`n_clusters` must be in \[1, n_samples\] = \[1, 20\]; got -1"):
        fastrbf.kmeans(X, -1)
    with pytest.raises(ValueError, match=r"`n_clusters` must be in \[1, n_samples\] = \[1, 20\]; got 21"):
        fastrbf.kmeans_plusplus(X, 21)
    with pytest.raises(ValueError, match=r"`centers` must have the same number of features as `X` \(4\)"):
        fastrbf.lloyd_assign(X, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"`labels` must have one value per row of `X` \(20\)"):
        fastrbf.lloyd_update(X, [0, 1], 2)
    with pytest.raises(ValueError, match=r"`sample_weight` must be >= 0; got -1.0"):
        fastrbf.kmeans(X, 2, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match=r"`init` must have shape \(2, 4\)"):
        fastrbf.kmeans(X, 2, init=np.ones((3, 4)))
    broken = sp.csr_matrix(X)
    broken.indices = broken.indices.copy()
    broken.indices[0] = 7
    with pytest.raises(ValueError, match=r"`X` must be a well-formed sparse matrix .* column indices in \[0, 4\)"):
        fastrbf.kmeans(broken, 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sklearn_estimator_on_sparse_data_equals_scikit_learn(rng, dtype):
    from sklearn.cluster import KMeans as SkKMeans

    from fastrbf.sklearn import KMeans

    X = sparse_data(rng, 600, 40, 0.1, dtype)
    C0 = X[:5].toarray()
    ours = KMeans(5, init=C0, n_init=1).fit(X)
    sk = SkKMeans(5, init=C0, n_init=1, algorithm="lloyd").fit(X)
    assert_array_equal(ours.labels_, sk.labels_)
    assert ours.n_iter_ == sk.n_iter_
    assert ours.cluster_centers_.dtype == dtype
    tol = 1e-10 if dtype == np.float64 else 600 * 2e-7
    assert_allclose(ours.cluster_centers_, sk.cluster_centers_, rtol=tol, atol=tol)
    Q = sparse_data(rng, 50, 40, 0.2, dtype)
    assert_array_equal(ours.predict(Q), sk.predict(Q))
    T = ours.transform(Q)
    assert T.dtype == dtype
    assert_allclose(T, sk.transform(Q), rtol=10 * tol, atol=10 * tol)
    assert_allclose(T, ours.transform(Q.toarray()), rtol=10 * tol, atol=10 * tol)
    assert ours.score(Q) == pytest.approx(ours.score(Q.toarray()), rel=1e-12 if dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sklearn_estimator_on_sparse_arrays_as_on_sparse_matrices(rng, dtype):
    # scipy.sparse's array classes sum rows to 1-D where its matrices give (n, 1)
    from fastrbf.sklearn import KMeans

    X = sparse_data(rng, 300, 20, 0.2, dtype)
    C0 = X[:4].toarray()
    m = KMeans(4, init=C0, n_init=1).fit(X)
    a = KMeans(4, init=C0, n_init=1).fit(sp.csr_array(X))
    assert_array_equal(a.cluster_centers_, m.cluster_centers_)
    Q = sparse_data(rng, 30, 20, 0.3, dtype)
    T = a.transform(sp.csr_array(Q))
    assert T.shape == (30, 4) and T.dtype == dtype
    assert_array_equal(T, m.transform(Q))
    assert_array_equal(a.predict(sp.csr_array(Q)), m.predict(Q))
    assert a.score(sp.csr_array(Q)) == m.score(Q)
