"""rbf_network(centers="forward"): centres by orthogonal-least-squares forward selection,
against the brute-force reference (every candidate refitted at every step), its
properties, thread-count independence, the dask backend and the argument errors."""

import re

import numpy as np
import pytest

import fastrbf
from fastrbf import reference
from fastrbf.models import forward as fwd


def _data(rng, n=200, k=1):
    X = rng.random((n, 2))
    Y = np.c_[np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1]), X[:, 0] ** 2 - X[:, 1], np.cos(3 * X[:, 1])][:, :k]
    return X, (Y[:, 0] if k == 1 else Y)


def _codes(y, classes):
    """The -1/+1 (one-vs-rest) targets a classifier network fits."""
    if classes.shape[0] == 2:
        return np.where(y == classes[1], 1.0, -1.0)
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("alpha", [0.0, 1e-3])
@pytest.mark.parametrize("bias", [True, False])
def test_equals_the_brute_force_reference(rng, k, alpha, bias):
    X, Y = _data(rng, 200, k)
    cand = X[::2]
    g = rng.random(cand.shape[0]) * 10 + 5  # one width per candidate
    sel, err = reference.rbf_forward(X, Y, cand, gamma=g, n_centers=12, alpha=alpha, bias=bias)
    net = fastrbf.rbf_network(X, Y, centers="forward", candidates=cand, n_centers=12, gamma=g, alpha=alpha, bias=bias)
    np.testing.assert_array_equal(net.selection, sel)
    np.testing.assert_allclose(net.selection_error, err, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(net.centers, cand[sel])
    np.testing.assert_array_equal(net.gamma, g[sel])
    W, b = reference.rbf_network(X, Y, cand[sel], gamma=g[sel], alpha=alpha, bias=bias)
    np.testing.assert_allclose(net.weights, W, rtol=0, atol=1e-10 * max(1.0, np.abs(W).max()))
    np.testing.assert_allclose(net.bias, b, rtol=0, atol=1e-10 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classification_selects_on_the_class_codes(rng, n_classes):
    X, _ = _data(rng, 240)
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0.5).astype(int) + (n_classes == 3) * (X[:, 1] > 0.6)]
    classes = np.unique(y)
    cand = X[::3]
    sel, err = reference.rbf_forward(X, _codes(y, classes), cand, gamma=8.0, n_centers=10)
    net = fastrbf.rbf_network(X, y, centers="forward", candidates=cand, n_centers=10, gamma=8.0, classify=True)
    np.testing.assert_array_equal(net.selection, sel)
    np.testing.assert_allclose(net.selection_error, err, rtol=1e-10, atol=1e-12)
    assert set(net.predict(X)) <= set(classes)


def test_the_error_never_increases_and_is_the_least_squares_error_of_the_chosen_set(rng):
    X, Y = _data(rng, 300, 2)
    net = fastrbf.rbf_network(X, Y, centers="forward", n_centers=25, gamma=10.0)
    assert net.selection.shape == (25,) and np.unique(net.selection).shape == (25,)
    assert np.all(np.diff(net.selection_error) <= 0)
    Phi = reference.rbf_design(X, X[net.selection], gamma=10.0)
    den = np.sum((Y - Y.mean(axis=0)) ** 2)
    for kk in (1, 7, 25):
        A = np.c_[Phi[:, :kk], np.ones(300)]
        r = Y - A @ np.linalg.lstsq(A, Y, rcond=None)[0]
        assert net.selection_error[kk - 1] == pytest.approx(np.sum(r**2) / den, rel=1e-9)


def test_with_every_point_chosen_the_network_interpolates():
    X = np.linspace(0, 1, 25)[:, None]
    y = np.sin(5 * X[:, 0]) + X[:, 0]
    net = fastrbf.rbf_network(X, y, centers="forward", candidates="all", gamma=150.0, bias=False)
    np.testing.assert_array_equal(np.sort(net.selection), np.arange(25))
    assert net.selection_error[-1] < 1e-12
    np.testing.assert_allclose(net.predict(X), y, atol=1e-7)
    # with the bias, 24 centres span the 25-dimensional space: the last candidate is dependent
    net = fastrbf.rbf_network(X, y, centers="forward", candidates="all", gamma=150.0)
    assert net.selection.shape == (24,) and net.selection_error[-1] < 1e-12
    np.testing.assert_allclose(net.predict(X), y, atol=1e-7)


def test_tol_stops_the_selection(rng):
    X, y = _data(rng, 300)
    net = fastrbf.rbf_network(X, y, centers="forward", gamma=10.0, tol=1e-3)
    assert net.selection_error[-1] < 1e-3 <= net.selection_error[-2]
    assert net.centers.shape == (net.selection.shape[0], 2)


def test_dependent_candidates_are_skipped_never_chosen_twice(rng):
    X, y = _data(rng, 100)
    cand = np.r_[X[:10], X[:10]]  # each candidate twice: the first kept
    net = fastrbf.rbf_network(X, y, centers="forward", candidates=cand, gamma=10.0)
    np.testing.assert_array_equal(np.sort(net.selection), np.arange(10))
    cand = np.r_[X[:10], X[:10] + 1e-9]  # numerically dependent twins
    net = fastrbf.rbf_network(X, y, centers="forward", candidates=cand, gamma=10.0)
    np.testing.assert_array_equal(np.sort(net.selection % 10), np.arange(10))


def test_forward_selection_resolves_local_detail_better_than_kmeans():
    def f(x):
        return np.where(x < 0.3, np.sin(60 * x), np.sin(4 * x))

    rng = np.random.default_rng(1)
    X = rng.random((600, 1))
    Xt = rng.random((2000, 1))
    y, yt = f(X[:, 0]), f(Xt[:, 0])
    kw = dict(gamma=400.0, n_centers=20, alpha=1e-8)  # held-out MSE 0.015 vs 0.14
    e_fwd = np.mean((fastrbf.rbf_network(X, y, centers="forward", **kw).predict(Xt) - yt) ** 2)
    e_km = np.mean((fastrbf.rbf_network(X, y, seed=0, **kw).predict(Xt) - yt) ** 2)
    assert e_fwd < 0.5 * e_km


def test_the_same_bits_for_any_thread_count_and_chunking(rng, monkeypatch):
    X = rng.standard_normal((3000, 5))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2]]
    kw = dict(centers="forward", candidates=300, n_centers=20, gamma=0.2, seed=4)
    one = fastrbf.rbf_network(X, Y, n_threads=1, **kw)
    two = fastrbf.rbf_network(X, Y, n_threads=2, **kw)
    for name in ("selection", "selection_error", "centers", "weights", "bias"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    Cc = X[:300].copy()
    spec = fastrbf.KERNELS["gaussian"].spec(np.full(300, 0.2))
    G1 = fwd.gram_pass(Cc, X, spec, Y, 1)
    monkeypatch.setattr(fwd, "CHUNK_ELEMENTS", 1)  # 256-row chunks (the last one shorter)
    G2 = fwd.gram_pass(Cc, X, spec, Y, 2)
    M = np.c_[reference.rbf_design(X, Cc, gamma=0.2), np.ones(3000), Y]
    iu = np.triu_indices(M.shape[1])
    np.testing.assert_allclose(G1[iu], (M.T @ M)[iu], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(G2[iu], G1[iu], rtol=1e-12, atol=1e-9)
    again = fastrbf.rbf_network(X, Y, n_threads=2, **kw)
    np.testing.assert_array_equal(again.selection, one.selection)


def test_float32_kept_and_inputs_not_modified(rng):
    X, y = _data(rng, 200)
    X32, y32, cand = X.astype(np.float32), y.astype(np.float32), X[::4].astype(np.float32)
    g = np.full(cand.shape[0], 8.0)
    before = [a.copy() for a in (X32, y32, cand, g)]
    net = fastrbf.rbf_network(X32, y32, centers="forward", candidates=cand, n_centers=8, gamma=g)
    for a, b in zip((X32, y32, cand, g), before, strict=True):
        assert np.array_equal(a, b)
    assert net.predict(X32).dtype == np.float32
    net64 = fastrbf.rbf_network(X32.astype(np.float64), y32.astype(np.float64), centers="forward",
                                candidates=cand.astype(np.float64), n_centers=8, gamma=g)
    np.testing.assert_array_equal(net.selection, net64.selection)


def test_subsample_candidates_are_seeded_rows_and_length_scale_keeps_units(rng):
    X, y = _data(rng, 300)
    a = fastrbf.rbf_network(X, y, centers="forward", candidates=40, n_centers=5, gamma=10.0, seed=7)
    b = fastrbf.rbf_network(X, y, centers="forward", candidates=40, n_centers=5, gamma=10.0, seed=7)
    np.testing.assert_array_equal(a.centers, b.centers)
    rows = np.sort(np.random.default_rng(7).choice(300, 40, replace=False))
    np.testing.assert_array_equal(a.centers, X[rows][a.selection])
    ls = np.array([2.0, 0.5])
    c = fastrbf.rbf_network(X, y, centers="forward", candidates=X[::5], n_centers=5, gamma=10.0, length_scale=ls)
    np.testing.assert_array_equal(c.centers, X[::5][c.selection])


def test_learn_gamma_runs_on_the_chosen_centres(rng):
    X, y = _data(rng, 200)
    g = np.linspace(5, 15, 50)
    net = fastrbf.rbf_network(X, y, centers="forward", candidates=X[::4], n_centers=6, gamma=g, learn_gamma=True,
                              per_center=True, max_gamma_iter=3)
    assert net.gamma.shape == (6,) and net.error_history is not None
    np.testing.assert_array_equal(net.centers, X[::4][net.selection])


def msg(name, rule, value):
    return "^" + re.escape(f"`{name}` must be {rule}; got {value!r}.") + "$"


def test_bad_arguments_raise(rng):
    X, y = _data(rng, 30)
    fit = lambda **kw: fastrbf.rbf_network(X, y, centers="forward", gamma=1.0, **kw)  # noqa: E731
    rule = 'None, "all", an int in [1, n_samples] = [1, 30] or an array'
    with pytest.raises(ValueError, match=msg("tol", "in (0, 1)", 2.0)):
        fit(tol=2.0)
    with pytest.raises(ValueError, match=msg("tol", "in (0, 1)", 0.0)):
        fit(tol=0.0)
    with pytest.raises(TypeError, match=msg("tol", "in (0, 1)", "0.1")):
        fit(tol="0.1")
    with pytest.raises(ValueError, match=msg("n_centers", "None or an int in [1, 3] (the number of distinct "
                                                          "candidates)", 4)):
        fit(candidates=np.r_[X[:3], X[:3]], n_centers=4)
    with pytest.raises(ValueError, match=re.escape("`candidates` must have the same number of features as `X` (2)")):
        fit(candidates=np.ones((4, 3)))
    with pytest.raises(ValueError, match=msg("candidates", rule, 31)):
        fit(candidates=31)
    with pytest.raises(ValueError, match=msg("candidates", rule, 0)):
        fit(candidates=0)
    with pytest.raises(TypeError, match=msg("candidates", rule, 2.5)):
        fit(candidates=2.5)
    with pytest.raises(ValueError, match=msg("candidates", rule, "some")):
        fit(candidates="some")
    with pytest.raises(ValueError, match=re.escape('`tol` is used only with centers="forward"; got tol=0.1.')):
        fastrbf.rbf_network(X, y, n_centers=3, gamma=1.0, tol=0.1)
    with pytest.raises(ValueError, match=re.escape('`candidates` is used only with centers="forward"; got '
                                                   'candidates=5.')):
        fastrbf.rbf_network(X, y, n_centers=3, gamma=1.0, candidates=5)


def test_dask_equals_in_memory(rng):
    import dask
    import dask.array as da

    from fastrbf import dask as fd

    X, Y = _data(rng, 900, 2)
    yc = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.5)
    Xd = da.from_array(X, chunks=(250, 2))
    with dask.config.set(scheduler="threads"):
        for kw, T in [(dict(alpha=1e-3), Y), (dict(candidates=60, seed=3, bias=False), Y),
                      (dict(length_scale=[1.0, 2.0]), Y), (dict(classify=True), yc)]:
            ref = fastrbf.rbf_network(X, T, centers="forward", n_centers=10, gamma=5.0, **kw)
            Td = da.from_array(T, chunks=(250, *T.shape[1:]))
            net = fd.rbf_network(Xd, Td, centers="forward", n_centers=10, gamma=5.0, **kw)
            np.testing.assert_array_equal(net.selection, ref.selection)
            # the Gram summed over blocks in another order: its rounding, times the
            # conditioning of the chosen columns, reaches the errors' tenth digit
            np.testing.assert_allclose(net.selection_error, ref.selection_error, rtol=1e-8)
            np.testing.assert_allclose(net.centers, ref.centers, rtol=1e-15)
            np.testing.assert_allclose(net.weights, ref.weights, rtol=0, atol=1e-10 * np.abs(ref.weights).max())


def test_sklearn_estimators_pass_forward_selection_through(rng):
    from fastrbf.sklearn import RBFNetworkClassifier, RBFNetworkRegressor

    X = rng.uniform(0, 1, (120, 2))
    y = np.sin(6 * X[:, 0]) + X[:, 1]
    est = RBFNetworkRegressor(8, gamma=5.0, centers="forward", candidates=60, random_state=0).fit(X, y)
    ref = fastrbf.rbf_network(X, y, gamma=5.0, centers="forward", n_centers=8, candidates=60, seed=0)
    np.testing.assert_array_equal(est.centers_, ref.centers)
    np.testing.assert_array_equal(est.selection_, ref.selection)
    np.testing.assert_array_equal(est.selection_error_, ref.selection_error)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=1e-12, atol=1e-12)
    labels = np.where(y > np.median(y), "hi", "lo")
    clf = RBFNetworkClassifier(6, gamma=5.0, centers="forward", tol=1e-3).fit(X, labels)
    ref = fastrbf.rbf_network(X, labels, gamma=5.0, centers="forward", n_centers=6, tol=1e-3, classify=True)
    np.testing.assert_array_equal(clf.predict(X), ref.predict(X))
    with pytest.raises(ValueError, match='`candidates` and `tol` are used only with centers="forward"'):
        RBFNetworkRegressor(8, tol=0.1).fit(X, y)


def test_ragged_candidates_are_refused_by_name(rng):
    X = rng.random((30, 2))
    with pytest.raises(ValueError, match=r"`candidates` must be .*; got a ragged list \(rows of different lengths\)"):
        fastrbf.rbf_network(X, X[:, 0], gamma=1.0, centers="forward", candidates=[[0.0, 1.0], [1.0]])
