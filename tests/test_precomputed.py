"""kernel="precomputed" in the kernel ridge estimator: scikit-learn's rule (``X`` is the
Gram matrix of the training points in ``fit``, of the queries with them in
``predict``), equal to scikit-learn and to the same kernel computed by fastrbf."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from fastrbf.sklearn import KernelRidge


@pytest.fixture
def data(rng):
    X = rng.random((40, 3))
    return X, rng.random(40), rng.random((9, 3))


def test_precomputed_equals_scikit_learn_and_the_kernel_itself(data):
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    X, y, Q = data
    K, Kq = X @ X.T, Q @ X.T
    before = K.copy()
    ours = KernelRidge(kernel="precomputed", alpha=0.1).fit(K, y)
    assert_array_equal(K, before)  # the caller's Gram matrix is not factored in place
    sk = SkKernelRidge(kernel="precomputed", alpha=0.1).fit(K, y)
    assert_allclose(ours.predict(Kq), sk.predict(Kq), rtol=1e-10)
    assert_allclose(ours.dual_coef_, sk.dual_coef_, rtol=1e-10)
    same = KernelRidge(kernel="polynomial", degree=1, coef0=0.0, gamma=1.0, alpha=0.1).fit(X, y)
    assert_allclose(ours.predict(Kq), same.predict(Q), rtol=1e-12)
    assert ours.predict(Kq).shape == (9,)


def test_precomputed_with_several_outputs_intercept_alphas_and_float32(data, rng):
    X, _, Q = data
    Y = rng.random((40, 2))
    K, Kq = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)), np.exp(-((Q[:, None] - X[None]) ** 2).sum(-1))
    a = np.linspace(0.01, 0.1, 40)
    ours = KernelRidge(kernel="precomputed", alpha=a, fit_intercept=True).fit(K, Y)
    same = KernelRidge(kernel="gaussian", gamma=1.0, alpha=a, fit_intercept=True).fit(X, Y)
    assert_allclose(ours.predict(Kq), same.predict(Q), rtol=1e-10)
    f32 = KernelRidge(kernel="precomputed", alpha=0.1).fit(K.astype(np.float32), Y.astype(np.float32))
    assert f32.predict(Kq.astype(np.float32)).dtype == np.float32


def test_precomputed_refuses_a_matrix_that_is_not_square_naming_x(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="`X` must be the square Gram matrix"):
        KernelRidge(kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="`X` \\+ alpha I is not positive definite"):
        KernelRidge(kernel="precomputed", alpha=0.0).fit(-np.eye(40), y)


def test_precomputed_cross_validates_as_scikit_learn(data):
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
    from sklearn.model_selection import cross_val_score

    X, y, _ = data
    K = X @ X.T
    ours = cross_val_score(KernelRidge(kernel="precomputed", alpha=0.1), K, y, cv=4)
    assert_allclose(ours, cross_val_score(SkKernelRidge(kernel="precomputed", alpha=0.1), K, y, cv=4), rtol=1e-10)


@pytest.mark.parametrize("precomputed", [False, True])
def test_sample_weight_as_scikit_learn(data, rng, precomputed):
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    X, y, Q = data
    sw = 2 * rng.random(40)
    sw[[3, 7]] = 0  # left out of the fit
    if precomputed:
        K, Kq = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)), np.exp(-0.5 * ((Q[:, None] - X[None]) ** 2).sum(-1))
        ours = KernelRidge(kernel="precomputed", alpha=0.1).fit(K, y, sample_weight=sw)
        sk = SkKernelRidge(kernel="precomputed", alpha=0.1).fit(K, y, sample_weight=sw)
        assert_allclose(ours.predict(Kq), sk.predict(Kq), rtol=1e-10)
        assert_allclose(ours.dual_coef_, sk.dual_coef_, rtol=1e-10, atol=1e-12)
    else:
        ours = KernelRidge(kernel="rbf", gamma=0.5, alpha=0.1).fit(X, y, sample_weight=sw)
        sk = SkKernelRidge(kernel="rbf", gamma=0.5, alpha=0.1).fit(X, y, sample_weight=sw)
        assert_allclose(ours.predict(Q), sk.predict(Q), rtol=1e-10)
        assert ours.X_fit_.shape == (38, 3)
    # weights of one: the unweighted fit, bit for bit
    A = K if precomputed else X
    est = KernelRidge(kernel="precomputed" if precomputed else "rbf", gamma=None if precomputed else 0.5, alpha=0.1)
    assert_array_equal(est.fit(A, y, sample_weight=np.ones(40)).dual_coef_, est.fit(A, y).dual_coef_)


def test_sample_weight_refusals_name_the_argument(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="`sample_weight` is not supported with fit_intercept=True"):
        KernelRidge(fit_intercept=True).fit(X, y, sample_weight=np.ones(40))
    with pytest.raises(ValueError, match='`sample_weight` needs the exact solver'):
        KernelRidge(solver="nystrom-pcg").fit(X, y, sample_weight=np.ones(40))
    with pytest.raises(ValueError, match="`alpha` / `sample_weight` overflows float64"):
        KernelRidge().fit(X, y, sample_weight=np.full(40, 1e-320))
    with pytest.raises(ValueError, match="at least one non-zero"):  # scikit-learn's check
        KernelRidge().fit(X, y, sample_weight=np.zeros(40))
    with pytest.raises(ValueError, match="[Nn]egative"):
        KernelRidge().fit(X, y, sample_weight=-np.ones(40))
