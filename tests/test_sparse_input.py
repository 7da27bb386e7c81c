"""scipy.sparse input to sqdist, gram, the random Fourier and Nystroem maps and their
estimators: never densified, as accurate as dense input, equal to scikit-learn where it
computes the same thing.

Tolerances: squared distances meet the dense promise (``TOL``: 1e-12 relative in
float64, 1e-5 in float32) against extended-precision values of the densified data;
kernel values and features are compared with the dense path of fastrbf at the same
relative tolerance scaled by the largest value (they are functions of those distances).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from helpers import TOL, assert_rel, exact_sqdist
from numpy.testing import assert_allclose, assert_array_equal

import fastrbf
from fastrbf import _pairwise

DTYPES = [np.float64, np.float32]


def sparse(rng, n, d, density, dtype):
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.data = X.data * 4 - 2
    return X.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", ["csr_matrix", "csr_array", "csc", "coo"])
def test_sqdist_of_sparse_rows_meets_the_dense_accuracy(rng, dtype, fmt):
    X = sparse(rng, 70, 40, 0.15, dtype)
    Y = sparse(rng, 50, 40, 0.3, dtype)
    conv = {"csr_matrix": lambda A: A, "csr_array": sp.csr_array, "csc": lambda A: A.tocsc(), "coo": lambda A: A.tocoo()}[fmt]
    D = fastrbf.sqdist(conv(X), conv(Y))
    assert D.dtype == dtype and D.shape == (70, 50)
    assert_rel(D, exact_sqdist(X.toarray(), Y.toarray()), TOL[dtype], atol=TOL[dtype] * 1e-3)
    # one side dense: the same values
    assert_array_equal(fastrbf.sqdist(conv(X), Y.toarray()), D)
    assert_array_equal(fastrbf.sqdist(X.toarray(), conv(Y)), D)
    S = fastrbf.sqdist(conv(X))
    assert_array_equal(S, S.T)
    assert_array_equal(np.diag(S), 0)
    assert_rel(S, exact_sqdist(X.toarray(), X.toarray()), TOL[dtype], atol=TOL[dtype] * 1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sparse_sqdist_recomputes_near_duplicates_exactly(rng, dtype, monkeypatch):
    # rows a relative 1e-7 apart: the norm expansion alone cancels every digit; the
    # certified entries are the direct differences, the bits of the dense direct path
    monkeypatch.setattr(_pairwise, "GEMM_BLOCK_ELEMENTS", 64)  # several row blocks
    X = sparse(rng, 12, 30, 0.4, dtype)
    Z = sp.vstack([X, X * dtype(1 + 1e-3 if dtype == np.float32 else 1 + 1e-7), X]).tocsr()
    D = fastrbf.sqdist(Z)
    assert_rel(D, exact_sqdist(Z.toarray(), Z.toarray()), TOL[dtype], atol=0.0)
    assert (np.diag(D[:12, 24:]) == 0).all()  # identical rows
    assert (np.diag(D[:12, 12:24]) > 0).all()


def test_sparse_sqdist_is_bitwise_the_same_for_any_thread_count(rng, monkeypatch):
    monkeypatch.setattr(_pairwise, "GEMM_BLOCK_ELEMENTS", 256)
    X = sparse(rng, 300, 60, 0.1, np.float64)
    one = fastrbf.sqdist(X, n_threads=1)
    assert_array_equal(fastrbf.sqdist(X, n_threads=2), one)
    assert_array_equal(fastrbf.sqdist(X, n_threads=3), one)


def test_sparse_input_is_not_modified_and_may_be_non_canonical(rng):
    # unsorted column indices and a duplicate entry (summed, as toarray does)
    data = np.array([1.0, 2.0, 3.0, 0.5])
    indices = np.array([3, 0, 2, 0])
    indptr = np.array([0, 2, 4])
    X = sp.csr_matrix((data, indices, indptr), shape=(2, 5))
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    D = fastrbf.sqdist(X)
    for a, b in zip(before, (X.data, X.indices, X.indptr), strict=True):
        assert_array_equal(a, b)
    assert_rel(D, exact_sqdist(X.toarray(), X.toarray()), 1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gram_of_sparse_rows_equals_the_dense_gram_for_every_kernel(rng, dtype):
    X = sparse(rng, 40, 25, 0.2, dtype)
    Y = sparse(rng, 30, 25, 0.2, dtype)
    for kernel in fastrbf.KERNELS:
        K = fastrbf.gram(X, Y, kernel=kernel, gamma=0.3)
        ref = fastrbf.gram(X.toarray(), Y.toarray(), kernel=kernel, gamma=0.3)
        assert K.dtype == dtype
        scale = max(float(np.abs(ref).max()), 1.0)
        assert_allclose(K, ref, rtol=10 * TOL[dtype], atol=10 * TOL[dtype] * scale, err_msg=kernel)
        S = fastrbf.gram(X, kernel=kernel, gamma=0.3)
        assert_array_equal(S, S.T)
        assert_allclose(S, fastrbf.gram(X.toarray(), kernel=kernel, gamma=0.3), rtol=10 * TOL[dtype],
                        atol=10 * TOL[dtype] * scale, err_msg=kernel)


def test_sparse_gram_with_length_scales_and_out_equals_scikit_learn(rng):
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

    X = sparse(rng, 40, 25, 0.2, np.float64)
    Y = sparse(rng, 30, 25, 0.2, np.float64)
    out = np.empty((40, 30))
    K = fastrbf.gram(X, Y, gamma=0.3, out=out)
    assert K is out
    assert_allclose(K, rbf_kernel(X, Y, gamma=0.3), rtol=1e-12)
    assert_allclose(fastrbf.gram(X, Y, kernel="polynomial", gamma=0.3, degree=3, coef0=1.0),
                    polynomial_kernel(X, Y, degree=3, gamma=0.3, coef0=1.0), rtol=1e-12)
    ls = np.linspace(0.5, 2.0, 25)
    assert_allclose(fastrbf.gram(X, Y, gamma=0.3, length_scale=ls),
                    fastrbf.gram(X.toarray(), Y.toarray(), gamma=0.3, length_scale=ls), rtol=1e-12, atol=1e-15)


def test_bad_sparse_input_is_refused_naming_the_argument(rng):
    X = sparse(rng, 10, 5, 0.5, np.float64)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="`Y`"):
        fastrbf.sqdist(X, bad)
    with pytest.raises(ValueError, match="`Y`.*same number of features"):
        fastrbf.gram(X, sparse(rng, 4, 6, 0.5, np.float64))
    with pytest.raises(ValueError, match="`X`"):
        fastrbf.gram(sp.csr_matrix(np.full((2, 2), 1e200)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["cos", "cos_sin"])
def test_random_fourier_features_of_sparse_rows(rng, dtype, kind):
    X = sparse(rng, 120, 30, 0.1, dtype)
    m = fastrbf.random_fourier(30, 64, gamma=0.5, seed=0, kind=kind, dtype=dtype)
    Z = m.transform(X)
    assert Z.dtype == dtype
    assert_allclose(Z, m.transform(X.toarray()), rtol=0, atol=10 * TOL[dtype])
    assert_array_equal(m.transform(sp.csr_array(X)), Z)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["kmeans", "random"])
def test_nystroem_on_sparse_rows_equals_the_densified_data(rng, dtype, method):
    X = sparse(rng, 150, 30, 0.1, dtype)
    a = fastrbf.nystroem(X, 15, gamma=0.5, method=method, seed=0)
    b = fastrbf.nystroem(X.toarray(), 15, gamma=0.5, method=method, seed=0)
    assert_array_equal(a.landmarks, b.landmarks)
    Z = a.transform(X)
    assert Z.dtype == dtype
    assert_allclose(Z, b.transform(X.toarray()), rtol=0, atol=100 * TOL[dtype])


def test_estimators_take_sparse_input(rng):
    from sklearn.kernel_approximation import RBFSampler

    from fastrbf.sklearn import KMeans, Nystroem, RandomFourierFeatures

    X = sparse(rng, 150, 30, 0.1, np.float64)
    Xd = X.toarray()
    for est in (RandomFourierFeatures(n_components=32, random_state=0), Nystroem(n_components=15, gamma=0.5,
                                                                                random_state=0)):
        Z = est.fit(sp.csr_array(X)).transform(X.tocsc())
        assert_allclose(Z, type(est)(**est.get_params()).fit(Xd).transform(Xd), rtol=0, atol=1e-12)
    # the same frequencies as scikit-learn's sampler gives the same features
    sk = RBFSampler(gamma=0.5, n_components=32, random_state=0).fit(X)
    ours = RandomFourierFeatures(gamma=0.5, n_components=32, random_state=0).fit(X)
    m = fastrbf.approx.RandomFourierMap(sk.random_weights_, sk.random_offset_, 0.5, "cos")
    assert_allclose(m.transform(X), sk.transform(X), rtol=0, atol=1e-12)
    assert ours.transform(X).shape == (150, 32)
    km = KMeans(4, random_state=0, n_init=1).fit(X)
    assert_allclose(km.transform(X), km.transform(Xd), rtol=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_kernel_ridge_estimator_on_sparse_rows_equals_scikit_learn(rng, kernel):
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    from fastrbf.sklearn import KernelRidge

    X = sparse(rng, 80, 30, 0.2, np.float64)
    Q = sparse(rng, 20, 30, 0.2, np.float64)
    y = rng.standard_normal(80)
    sw = rng.random(80) + 0.5
    ours = KernelRidge(kernel=kernel, gamma=0.3, alpha=0.5).fit(X, y, sample_weight=sw)
    sk = SkKernelRidge(kernel=kernel, gamma=0.3, alpha=0.5).fit(X, y, sample_weight=sw)
    assert_allclose(ours.predict(Q), sk.predict(Q), rtol=1e-9, atol=1e-12)
    assert_allclose(ours.predict(Q.toarray()), sk.predict(Q), rtol=1e-9, atol=1e-12)
    dense = KernelRidge(kernel=kernel, gamma=0.3, alpha=0.5).fit(X.toarray(), y, sample_weight=sw)
    assert_allclose(dense.predict(Q), ours.predict(Q), rtol=1e-9, atol=1e-12)  # sparse queries, dense model
    assert sp.issparse(ours.X_fit_) and ours.X_fit_ is not X
    with pytest.raises(ValueError, match="Sparse `X` needs the exact solver"):
        KernelRidge(solver="nystrom-pcg").fit(X, y)


def test_rows_of_very_many_mostly_empty_columns(rng):
    # 10^11 columns, a few stored per row: the products run over the stored columns only
    # (SciPy's product of the columns as given would need 745 GiB); the same bits as on
    # the rows with the empty columns dropped
    n, d = 300, 10**11
    cols = rng.integers(0, d, 3 * n)
    cols[::5] = 7  # shared columns: non-zero products
    X = sp.csr_matrix((rng.random(3 * n), (np.repeat(np.arange(n), 3), cols)), shape=(n, d))
    X.sum_duplicates()
    used, inv = np.unique(X.indices, return_inverse=True)
    Xs = sp.csr_matrix((X.data, inv, X.indptr), shape=(n, used.size))
    assert_array_equal(fastrbf.sqdist(X, X[:9]), fastrbf.sqdist(Xs, Xs[:9]))
    assert_array_equal(fastrbf.gram(X, gamma=0.3), fastrbf.gram(Xs, gamma=0.3))
    assert_array_equal(fastrbf.gram(X, X[:4], kernel="polynomial", gamma=0.5), fastrbf.gram(Xs, Xs[:4], kernel="polynomial",
                                                                                          gamma=0.5))
    # what needs the dense centres is refused before allocating them, naming the remedy
    with pytest.raises(MemoryError, match=r"kmeans_plusplus: 8 dense centres of 100000000000 features needs .* "
                                          r"use a smaller `n_clusters`, or fewer features"):
        fastrbf.kmeans_plusplus(X, 8, seed=0)


def test_dense_only_functions_name_the_sparse_ones(rng):
    # a scipy.sparse matrix where only dense arrays are taken: refused by name, the remedy
    # and the functions that do take sparse rows (it was "got dtype object")
    X = sparse(rng, 30, 6, 0.3, np.float64)
    y = rng.standard_normal(30)
    for call in (lambda: fastrbf.kernel_ridge(X, y, gamma=0.5, alpha=0.1), lambda: fastrbf.interpolate(X, y),
                 lambda: fastrbf.knn(X, X, 3), lambda: fastrbf.gram_matvec(X, X, y, gamma=0.5)):
        with pytest.raises(TypeError, match=r"^`X` is a scipy.sparse matrix, and this function takes dense arrays: "
                                            r"pass `X`.toarray\(\) if it fits in memory. Sparse rows are taken by "
                                            r"sqdist, gram, nystroem"):
            call()
