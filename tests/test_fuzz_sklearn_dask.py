"""Property tests with random bad input for the scikit-learn estimators (fit and
predict/transform) and for fastrbf.dask's sqdist, gram, gram_matvec, lloyd_assign and
kmeans (on dask's synchronous scheduler).

Every call must either raise a ValueError, TypeError or MemoryError whose message names
an argument of the call (every backticked name in it is one of the call's parameters),
or return a correct result: the right shape and dtype, finite where the input was
finite, equal to the plain NumPy reference where that is cheap.  It must never crash
otherwise, hang, or modify its input.  The estimators validate ``X`` and ``y`` with
scikit-learn's own machinery (whose messages scikit-learn's estimator checks expect):
errors raised there are scikit-learn's and are accepted as they are.
"""

import inspect
import re
import traceback
import warnings

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import fastrbf.sklearn as fsk
from fastrbf import dask as fd
from fastrbf import reference
from fastrbf.sklearn import _base

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


# ---------------------------------------------------------------- values
#: bad (or borderline) values of any parameter: no huge positive int, which would be a
#: legitimate request for a long run (max_iter, n_init, restarts)
BAD = [-1, 0, -2.5, 2.5, np.nan, np.inf, -np.inf, 1e160, -1e160, 1e-160, "a", "", True, False, None,
       [1.0, 2.0], [[1.0], [2.0, 3.0]], np.array([np.nan]), np.float32(1e-30), np.int64(-3), object(),
       {"a": 1}, 1 + 2j]


def _value(good):
    """A parameter value: a good one (when there are) or a bad one, evenly."""
    bad = st.sampled_from(BAD)
    return st.one_of(st.sampled_from(good), bad) if good else bad


def _data_values(draw, shape, dtype):
    scale = draw(st.sampled_from([1.0, 1e160, 1e-160, 1e-5, 1e5]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == "int":
        return rng.integers(-5, 5, size=shape)
    with np.errstate(over="ignore", under="ignore"):
        return (scale * rng.standard_normal(shape)).astype(dtype)


@st.composite
def data(draw, n_max=12, d_max=3):
    """Finite data mostly; sometimes NaN/inf, the wrong ndim, empty, ragged, strings, complex."""
    n = draw(st.integers(1, n_max))
    d = draw(st.integers(1, d_max))
    dtype = draw(st.sampled_from([np.float64, np.float32, "int"]))
    X = _data_values(draw, (n, d), dtype)
    kind = draw(st.sampled_from(["good"] * 12 + ["nan", "inf", "1d", "3d", "empty", "ragged", "str", "complex",
                                                 "dupes", "bool"]))
    if kind in ("nan", "inf") and dtype != "int":
        X = X.copy()
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = np.nan if kind == "nan" else -np.inf
    elif kind == "1d":
        X = X[:, 0]
    elif kind == "3d":
        X = X[:, :, None]
    elif kind == "empty":
        X = X[:0]
    elif kind == "ragged":
        return [list(r) for r in X] + [[1.0] * (d + 1)]
    elif kind == "str":
        return X.astype(str)
    elif kind == "complex":
        return X + 1j
    elif kind == "dupes":
        X = np.repeat(X[:1], n, axis=0)
    elif kind == "bool":
        X = X > 0
    return X


def _finite(a):
    """``a`` is numbers (numeric strings count: scikit-learn converts them), all finite."""
    if np.asarray(a, dtype=object).dtype.kind == "c" or (isinstance(a, np.ndarray) and a.dtype.kind == "c"):
        return False
    try:
        f = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.all(np.isfinite(f)))


def _same(a, b):
    """Inputs unchanged: compare with the copy taken before the call."""
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return True


def _copy(a):
    if isinstance(a, np.ndarray):
        return a.copy()
    if isinstance(a, list):
        return [_copy(x) for x in a]
    return a


def _raised_by_sklearn(exc):
    """The error comes from scikit-learn's input validation (of ``X`` or ``y``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and "/sklearn/" in frames[-1].filename.replace("\\", "/")


def _check_message(exc, allowed):
    assert isinstance(exc, (ValueError, TypeError, MemoryError)), f"{type(exc).__name__}: {exc}"
    names = _NAME.findall(str(exc))
    assert names, f"the message names no argument: {exc}"
    assert set(names) <= set(allowed), f"names {set(names) - set(allowed)} that the caller did not pass: {exc}"


# ---------------------------------------------------------------- scikit-learn estimators
#: per estimator: good values of some parameters, mixed with BAD when drawn
GOOD = {
    fsk.RBFNetworkRegressor: {"n_centers": [1, 2, 3], "gamma": [None, 0.5, 1e-3], "alpha": [0.0, 1e-3],
                              "kernel": ["gaussian", "rbf", "cubic"], "centers": ["kmeans", "all"],
                              "fit_intercept": [True, False], "max_iter": [1, 5], "random_state": [0, None]},
    fsk.RBFNetworkClassifier: {"n_centers": [1, 2], "gamma": [None, 2.0], "centers": ["kmeans", "all"],
                               "alpha": [0.0, 0.1], "random_state": [1]},
    fsk.KernelRidge: {"alpha": [1.0, 1e-3], "kernel": ["gaussian", "laplacian", "poly"], "gamma": [None, 0.3],
                      "solver": ["auto", "cholesky", "nystrom-pcg"], "fit_intercept": [True, False],
                      "degree": [2, 3], "coef0": [1.0, 0.0], "random_state": [0]},
    fsk.RBFInterpolatorRegressor: {"kernel": ["thin_plate_spline", "gaussian", "cubic", "polynomial"],
                                   "epsilon": [None, 1.0, 3.0], "smoothing": [0.0, 1e-3, 1.0], "degree": [None, -1, 0, 1]},
    fsk.KMeans: {"n_clusters": [1, 2, 3], "init": ["k-means++", "random"], "n_init": [1, 2], "max_iter": [1, 10],
                 "tol": [0.0, 1e-4], "random_state": [0, None]},
    fsk.RandomFourierFeatures: {"gamma": [1.0, 1e-3], "n_components": [2, 10], "kind": ["cos", "cos_sin"],
                                "random_state": [0]},
    fsk.Nystroem: {"kernel": ["gaussian", "poly", "laplacian"], "gamma": [None, 0.5], "n_components": [1, 3, 50],
                   "method": ["random", "kmeans"], "alpha": [0.0, 1e-3], "random_state": [0]},
    fsk.GaussianProcessRegressor: {"kernel": ["gaussian", "prml"], "noise": [1e-2, 1.0], "optimizer": [None],
                                   "n_restarts_optimizer": [0, 1], "normalize_y": [False, True], "random_state": [0]},
}
#: starting parameters that fit the small data (the defaults ask for 8 or 10 clusters)
BASE = {fsk.RBFNetworkRegressor: {"n_centers": 2}, fsk.RBFNetworkClassifier: {"n_centers": 2},
        fsk.KMeans: {"n_clusters": 2}}
_UNSUPERVISED = (fsk.KMeans, fsk.RandomFourierFeatures, fsk.Nystroem)


@st.composite
def estimator_case(draw):
    cls = draw(st.sampled_from(sorted(GOOD, key=lambda c: c.__name__)))
    est = cls(**BASE.get(cls, {}))
    names = sorted(est.get_params())
    params = {}
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        params[name] = draw(_value(GOOD[cls].get(name, [])))
    X = draw(data())
    n = len(X) if isinstance(X, list) else (X.shape[0] if X.ndim else 0)
    if cls is fsk.RBFNetworkClassifier:
        y = draw(st.sampled_from([np.array(["a", "b"] * 9)[:n], np.arange(n) % 3, np.zeros(n),
                                  np.array([0.5, np.nan] * 9)[:n], np.arange(n + 1) % 2]))
    else:
        y = draw(st.one_of(st.just(None), data(n_max=n if n else 1, d_max=2)))
        two_d = isinstance(y, np.ndarray) and y.ndim == 2
        if y is None or (cls is fsk.GaussianProcessRegressor and two_d and draw(st.booleans())):
            good_x = isinstance(X, np.ndarray) and X.ndim == 2 and X.size and _finite(X)
            y = np.asarray(X, dtype=np.float64)[:, 0] if good_x else np.ones(n)
    return est.set_params(**params), params, X, y


def _check_fitted(est, X, y):
    """A fitted estimator on finite input: finite outputs of the right shape and dtype."""
    Xa = np.asarray(X)
    out_dtype = np.float32 if Xa.dtype == np.float32 else np.float64
    X = np.asarray(X, dtype=out_dtype)
    n = Xa.shape[0]
    if isinstance(est, fsk.KMeans):
        labels = est.predict(X)
        assert labels.shape == (n,) and labels.dtype == np.int64
        D = est.transform(X)
        assert D.shape == (n, est.cluster_centers_.shape[0]) and D.dtype == out_dtype
        ref = reference.sqdist(np.asarray(X, dtype=out_dtype), est.cluster_centers_)
        if np.all(np.isfinite(ref)):
            # the predicted centre is a nearest one (to rounding)
            best = ref.min(axis=1)
            got = ref[np.arange(n), labels]
            assert np.all(got <= best * (1 + 1e-4) + np.finfo(out_dtype).tiny), (got, best)
        return
    if isinstance(est, (fsk.RandomFourierFeatures, fsk.Nystroem)):
        Z = est.transform(X)
        assert Z.ndim == 2 and Z.shape[0] == n and Z.dtype == out_dtype
        assert np.all(np.isfinite(Z))
        if isinstance(est, fsk.RandomFourierFeatures):
            ref = reference.random_fourier_transform(np.asarray(X, dtype=np.float64), est.random_weights_,
                                                     est.random_offset_) if est.kind == "cos" else None
            arg = np.abs(np.asarray(X, dtype=np.float64) @ est.random_weights_).max()
            if ref is not None and arg < 1e5:
                # the phase W^T x + b is rounded in the dtype of X: its error, |arg| eps, moves the cosine
                atol = 8 * np.finfo(out_dtype).eps * max(1.0, arg)
                np.testing.assert_allclose(Z, ref, rtol=0, atol=atol)
        return
    pred = est.predict(X)
    assert pred.shape[0] == n
    if isinstance(est, fsk.RBFNetworkClassifier):
        assert set(np.unique(pred)) <= set(est.classes_)
        return
    assert pred.dtype == out_dtype or isinstance(est, fsk.GaussianProcessRegressor)
    single = isinstance(est, fsk.GaussianProcessRegressor) or np.ndim(y) == 1
    assert pred.shape == ((n,) if single else np.shape(y)), (pred.shape, np.shape(y))
    assert np.all(np.isfinite(pred)), pred
    if isinstance(est, fsk.KernelRidge) and est.solver == "cholesky" and not est.fit_intercept:
        # the reference: (K + alpha I)^-1 y by NumPy
        k = _base.resolve_kernel(est.kernel)
        g = 1.0 / Xa.shape[1] if est.gamma is None else est.gamma
        Xd = np.asarray(X, dtype=np.float64)
        K = reference.gram(Xd, kernel=k, gamma=g, degree=est.degree, coef0=est.coef0)
        if np.all(np.isfinite(K)) and np.ndim(est.alpha) == 0 and est.alpha >= 1e-3:
            W = reference.solve_regularized(K, np.asarray(y, dtype=np.float64), alpha=est.alpha)
            ref = K @ W
            scale = max(1.0, float(np.abs(ref).max()))
            np.testing.assert_allclose(pred, ref, rtol=1e-3, atol=1e-3 * scale)


@SETTINGS
@given(case=estimator_case())
def test_estimators_on_bad_input(case):
    est, params, X, y = case
    unsupervised = isinstance(est, _UNSUPERVISED)
    X0, y0 = _copy(X), _copy(y)
    p0 = {k: _copy(v) for k, v in params.items()}
    allowed = {*est.get_params(), "X", "y"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a warning (convergence, a low degree) is not a failure
            est.fit(X) if unsupervised else est.fit(X, y)
            labels = isinstance(est, fsk.RBFNetworkClassifier) and np.asarray(y).dtype.kind in "OUS"
            if _finite(X) and (unsupervised or labels or _finite(y)):
                _check_fitted(est, X, y)
            else:  # fitted on non-finite input: scikit-learn's validation lets none through
                raise AssertionError(f"fit accepted non-finite input: X={X!r}, y={y!r}")
    except (ValueError, TypeError, MemoryError) as exc:
        if not _raised_by_sklearn(exc):
            _check_message(exc, allowed)
    assert _same(X, X0) and _same(y, y0), "the input was modified"
    assert all(_same(params[k], p0[k]) for k in params), "a parameter was modified"
    assert clone(est).get_params().keys() == est.get_params().keys()


# ---------------------------------------------------------------- fastrbf.dask
DASK_GOOD = {
    "sqdist": {"n_threads": [1, None, -1]},
    "gram": {"kernel": ["gaussian", "laplacian", "cubic", "polynomial", "tanh", "multiquadric"],
             "gamma": [1.0, 1e-3, 1e3], "degree": [1, 2, 3], "coef0": [0.0, 1.0], "n_threads": [1]},
    "gram_matvec": {"kernel": ["gaussian", "inverse_quadratic", "polynomial"], "gamma": [0.5, 2.0],
                    "degree": [2], "coef0": [1.0], "n_threads": [1]},
    "lloyd_assign": {"n_threads": [1, 2]},
    "kmeans": {"init": ["k-means||"], "n_init": [1, 2], "max_iter": [1, 5], "tol": [0.0, 1e-4],
               "seed": [0, 3, np.random.default_rng(1)], "empty": ["relocate"], "oversampling_factor": [0.5, 2.0],
               "init_rounds": [1, 3], "n_threads": [1]},
}


def _daskify(draw, X):
    """``X`` as a dask array chunked by rows (sometimes badly), or left in memory."""
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.shape[0] == 0 or X.dtype.kind not in "biuf":
        return X
    how = draw(st.sampled_from(["rows", "rows", "rows", "numpy", "features"]))
    if how == "numpy":
        return X
    c = draw(st.integers(1, X.shape[0]))
    if how == "features" and X.shape[1] > 1:
        return da.from_array(X, chunks=(c, 1))
    return da.from_array(X, chunks=(c, X.shape[1]))


@st.composite
def dask_case(draw):
    name = draw(st.sampled_from(sorted(DASK_GOOD)))
    func = getattr(fd, name)
    X = draw(data(n_max=8))
    Xin = _daskify(draw, X)
    d = X.shape[1] if isinstance(X, np.ndarray) and X.ndim == 2 else 2
    args = [Xin]
    if name in ("sqdist", "gram"):
        Y = draw(st.one_of(st.none(), data(n_max=6, d_max=d)))
        args.append(_daskify(draw, Y) if Y is not None else None)
    elif name == "gram_matvec":
        Y = draw(data(n_max=5, d_max=d))
        m = Y.shape[0] if isinstance(Y, np.ndarray) and Y.ndim else 3
        V = draw(st.sampled_from([np.ones(m), np.ones((m, 2)), np.ones(m + 1), np.full(m, np.nan), np.ones((m, 1, 1)),
                                  np.ones(m, dtype=np.float32), "v"]))
        args += [Y, V]
    elif name == "lloyd_assign":
        args.append(draw(data(n_max=4, d_max=d)))
    else:
        args.append(draw(st.sampled_from([1, 2, 3, 0, -1, 2.0, True, "2", 10**6])))
    sig = inspect.signature(func).parameters
    kw = {}
    keyword = [p for p, v in sig.items() if v.kind is inspect.Parameter.KEYWORD_ONLY]
    for p in draw(st.lists(st.sampled_from(keyword), max_size=3, unique=True)):
        kw[p] = draw(_value(DASK_GOOD[name].get(p, [])))
    if name == "kmeans" and draw(st.booleans()):
        n = X.shape[0] if isinstance(X, np.ndarray) and X.ndim else 1
        kw["sample_weight"] = draw(st.sampled_from([np.ones(n), np.arange(n, dtype=float), -np.ones(n), np.zeros(n),
                                                    np.full(n, np.nan), np.ones(n + 1), np.ones((n, 1)), "w"]))
    return name, func, args, kw


def _check_dask_result(name, out, args, kw):
    X = np.asarray(args[0].compute() if isinstance(args[0], da.Array) else args[0])
    if name == "kmeans":
        C = out.centers
        labels = out.labels.compute()
        K = args[1]
        assert C.shape == (K, X.shape[1]) and labels.shape == (X.shape[0],) and labels.dtype == np.int64
        assert C.dtype == (np.float32 if X.dtype == np.float32 else np.float64)
        ref = reference.sqdist(np.asarray(X, dtype=np.float64), np.asarray(C, dtype=np.float64))
        assert np.all(np.isfinite(C)) or not np.all(np.isfinite(ref))
        if np.all(np.isfinite(ref)) and kw.get("sample_weight") is None:
            w = np.ones(X.shape[0])
            expect = float(ref[np.arange(X.shape[0]), labels] @ w)
            assert abs(out.inertia - expect) <= 1e-4 * max(expect, 1e-300) + 1e-30, (out.inertia, expect)
            assert np.all(ref[np.arange(X.shape[0]), labels] <= ref.min(axis=1) * (1 + 1e-4) + 1e-30)
        return
    if name == "lloyd_assign":
        labels, d2 = dask.compute(*out)
        C = np.asarray(args[1])
        ref_l, ref_d = reference.lloyd_assign(X, C)
        assert labels.shape == (X.shape[0],) and labels.dtype == np.int64 and d2.shape == (X.shape[0],)
        if np.all(np.isfinite(ref_d)):
            assert np.all(np.isfinite(d2))
            dd = reference.sqdist(X, C)[np.arange(X.shape[0]), labels]
            assert np.all(dd <= ref_d * (1 + 1e-4) + 1e-30)
        return
    res = out.compute()
    assert not np.any(np.isnan(res)), "NaN from finite input"
    # a length scale divides every feature before the distances (the reference has none)
    ls = kw.get("length_scale")
    div = 1.0 if ls is None else np.asarray(ls, dtype=np.float64)
    Y = None if args[1] is None else np.asarray(args[1].compute() if isinstance(args[1], da.Array) else args[1])

    def scaled(A):  # in the result's dtype, divided in float64 (as fastrbf scales features)
        return None if A is None else (A.astype(res.dtype).astype(np.float64) / div).astype(res.dtype)

    Xs, Ys = scaled(X), scaled(Y)
    gkw = {k: kw[k] for k in ("kernel", "gamma", "degree", "coef0") if k in kw}
    if name == "sqdist":
        ref = reference.sqdist(Xs, Ys)
    elif name == "gram":
        ref = reference.gram(Xs, Ys, **gkw)
    else:
        ref = reference.gram_matvec(Xs, Ys, args[2], **gkw)
    assert res.shape == ref.shape and res.dtype == ref.dtype, (res.shape, ref.shape, res.dtype, ref.dtype)
    ok = np.isfinite(ref)
    tol = 1e-3 if res.dtype == np.float32 else 1e-7
    scale = np.abs(ref[ok]).max() if ok.any() else 1.0
    np.testing.assert_allclose(res[ok], ref[ok], rtol=tol, atol=tol * scale)


@SETTINGS
@given(case=dask_case())
def test_dask_on_bad_input(case):
    name, func, args, kw = case
    copies = [_copy(a) for a in args]
    kw_copies = {k: _copy(v) for k, v in kw.items()}
    allowed = set(inspect.signature(func).parameters)
    with dask.config.set(scheduler="sync"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = func(*args, **kw)
                inputs_finite = all(_finite(a.compute() if isinstance(a, da.Array) else a) for a in args
                                    if isinstance(a, (np.ndarray, da.Array)))
                if inputs_finite:
                    _check_dask_result(name, out, args, kw)
        except (ValueError, TypeError, MemoryError) as exc:
            _check_message(exc, allowed)
    assert all(_same(a, c) for a, c in zip(args, copies, strict=True)), "an input was modified"
    assert all(_same(kw[k], kw_copies[k]) for k in kw), "an input was modified"


# k-means scales its tolerance by the variance of X, whose squares overflow at 1e160
# (NumPy warns; the run goes on with an infinite tolerance)
@pytest.mark.filterwarnings("ignore:overflow encountered in square:RuntimeWarning")
@pytest.mark.parametrize("value", [1e160, -1e160, 8e152, -8e152, 1e-160])
def test_huge_and_tiny_data_through_the_estimators(value):
    # finite data of extreme magnitude: finite predictions, never NaN; data whose float64
    # squared distances overflow (beyond 3.35e153 in one feature) are refused by the
    # kernel estimators in the name of `X`, and clustered by KMeans
    X = value * np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    y = np.array([0.0, 1.0, 0.0, 1.0, 0.0])
    for est in (fsk.KernelRidge(alpha=1.0), fsk.RBFNetworkRegressor(2, random_state=0)):
        if abs(value) > 1e154:
            with pytest.raises(ValueError, match=r"^`X` must have values of magnitude at most 3\.35e\+153 \(float64 "
                                                 r"squared distances over 1 feature\(s\) would overflow\); got 4e\+160\."):
                est.fit(X, y)
            continue
        out = est.fit(X, y).predict(X)
        assert out.shape == (5,) and np.all(np.isfinite(out))
    labels = fsk.KMeans(2, random_state=0).fit(X).predict(X)
    assert labels.shape == (5,) and len(set(labels.tolist())) == 2
