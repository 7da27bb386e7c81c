"""Property tests: random bad input to the distance/kernel, linear-algebra and model
functions gives either a ValueError/TypeError/MemoryError naming an argument of the
call, or a correct result (finite, of the right shape and dtype, close to the NumPy
reference where that is cheap), and never modifies its input."""

import copy
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from numpy.testing import assert_array_equal
from scipy.linalg import LinAlgWarning

import fastrbf
from fastrbf import NotPositiveDefiniteError, reference
from fastrbf.models import ConvergenceWarning

FUZZ = settings(max_examples=100, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPECIAL = [np.nan, np.inf, -np.inf, 1e160, -1e160, 1e-160, 1e39, -1e39, 1e300, 0.0]
DTYPES = [np.float64, np.float32, np.int64, np.bool_, np.float16, ">f8", ">f4"]
BAD_PARAMS = [0, -1.0, 0.0, np.nan, np.inf, -np.inf, "x", True, None, 1e300, 1e-300, 1e39, 1e-45, [1.0, 2.0],
              [[1.0], [2.0, 3.0]], np.ones((2, 2)), 2.5, -3, 10**30]

#: warnings a function documents for some valid input
ALLOWED_WARNINGS = (LinAlgWarning, ConvergenceWarning, UserWarning)


# ---------------------------------------------------------------- strategies
@st.composite
def arrays(draw, shape, *, good=30, positive=False, clean=False):
    """Mostly well-formed arrays of ``shape`` (any real dtype, odd layouts, extreme
    magnitudes), sometimes anything but (NaN/inf, wrong ndim, empty, ragged, strings)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kinds = ["good"] * good + ["special", "scale", "ndim", "empty", "ragged", "str", "complex", "object", "none",
                               "scalar", "layout", "list", "duplicate"]
    if clean:  # valid input only (any real dtype and layout, duplicates)
        kinds = ["good"] * 4 + ["layout", "list", "duplicate"]
    kind = draw(st.sampled_from(kinds))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    base = rng.standard_normal(shape)
    if positive:
        base = np.abs(base) + 0.1
    if kind == "special":
        a = base.astype(np.float64 if dtype.kind != "f" or dtype.itemsize == 2 else dtype)
        with np.errstate(over="ignore"):
            a.flat[int(rng.integers(a.size))] = draw(st.sampled_from(SPECIAL))
        return a
    if kind == "scale":
        return base * draw(st.sampled_from([1e-160, 1e-30, 1e30, 1e150, 1e160, 1e-300, 1e300]))
    if kind == "ndim":
        return base.ravel() if len(shape) == 2 else base[:, None, None]
    if kind == "empty":
        return np.zeros((0, *tuple(shape[1:])))
    if kind == "ragged":
        rows = base.reshape(shape[0], -1).tolist()
        return [*rows, [1.0] * (len(rows[0]) + 1)]  # one row longer than the others
    if kind == "str":
        return "abc"
    if kind == "complex":
        return base.astype(complex)
    if kind == "object":
        a = base.astype(object)
        a.flat[0] = None
        return a
    if kind == "none":
        return None
    if kind == "scalar":
        return 1.5
    if dtype == np.bool_:
        a = base > 0
    elif dtype.kind == "i":
        a = np.round(base * 3).astype(dtype)
    else:
        with np.errstate(over="ignore"):
            a = base.astype(dtype)
    if kind == "duplicate" and a.shape[0] > 1:
        a[-1] = a[0]
    if kind == "layout" and a.ndim == 2:
        return np.asfortranarray(a) if a.shape[1] > 1 else np.repeat(a, 2, axis=1)[:, ::2]
    if kind == "list":
        return a.tolist()
    return a


def params(good):
    """A good parameter value (mostly), or a bad one."""
    return st.integers(0, 5).flatmap(lambda i: good if i else st.sampled_from(BAD_PARAMS))


gammas = params(st.sampled_from([1.0, 0.3, 3.0, 1e-3, 50.0]))
kernels = st.integers(0, 7).flatmap(
    lambda i: st.sampled_from(sorted(fastrbf.KERNELS)) if i else st.sampled_from(["rbf", 3, None]))


# ---------------------------------------------------------------- the check
def _same(a, b):
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    if isinstance(a, np.random.Generator):
        return True  # a Generator is there to be drawn from
    return a is b or a == b


def run(fn, names, **kwargs):
    """Call ``fn(**kwargs)``: return its result, or None when it refused the input as it
    should (a ValueError/TypeError/MemoryError, or a NotPositiveDefiniteError, naming one
    of ``names``).  Fails on any other exception, an undocumented warning, or a modified
    input."""
    before = {k: copy.deepcopy(v) for k, v in kwargs.items()}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fn(**kwargs)
    except (ValueError, TypeError, MemoryError, NotPositiveDefiniteError) as exc:
        named = set(re.findall(r"`([^`]+)`", str(exc)))
        assert named & set(names), f"{type(exc).__name__} names none of {names}: {exc}"
        assert "sequence" not in str(exc) and "unsupported operand" not in str(exc), str(exc)
        out = None
    if currently_in_test_context():
        event(f"{getattr(fn, '__name__', fn)}: {'refused' if out is None else 'result'}")
    for w in caught:
        assert issubclass(w.category, ALLOWED_WARNINGS), f"{w.category.__name__}: {w.message}"
    for k, v in kwargs.items():
        assert (k == "out" and out is not None) or _same(before[k], v), f"`{k}` was modified"
    return out


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _all_float32(*arrays):
    return all(isinstance(a, np.ndarray) and a.dtype.newbyteorder("=") == np.float32 for a in arrays if a is not None)


def _close(got, ref, scale, dtype):
    """``got`` within the dtype's tolerance of ``ref`` (relative to ``scale``)."""
    rtol = 1e-9 if dtype == np.float64 else 2e-4
    with np.errstate(all="ignore"):
        err = np.abs(_f64(got) - ref)
        bound = rtol * (np.abs(ref) + scale) + (1e-300 if dtype == np.float64 else 1e-30)
    assert np.all(err <= bound), f"max error {np.max(err):.3g} (bound {np.max(bound):.3g})"


def _reference(fn, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _rows(a, default=2):
    """Rows of a 2-D array-like (``default`` for anything else)."""
    try:
        shape = np.shape(a)
    except ValueError:  # ragged
        return default
    return shape[0] if len(shape) == 2 and shape[0] > 0 else default


def _finite_scalar(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


# ---------------------------------------------------------------- distances and kernels
@FUZZ
@given(st.data())
def test_fuzz_distances_and_kernels(data):
    n, m, d = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))
    X = data.draw(arrays((n, d)), "X")
    Y = data.draw(st.one_of(st.none(), arrays((m, d))), "Y")
    which = data.draw(st.sampled_from(["sqdist", "gram", "gram_matvec"]))
    threads = data.draw(params(st.sampled_from([None, 1, 2, -1])), "n_threads")
    buf = data.draw(st.sampled_from(["none", "none", "none", "fresh", "X", "Y", "f32", "list"]), "out")
    rows_y = _rows(X if Y is None else Y, 1)
    out_arg = {"none": None, "fresh": np.full((n, rows_y), np.nan), "X": X, "Y": Y,
               "f32": np.zeros((n, rows_y), np.float32), "list": [[0.0] * rows_y] * n}[buf]
    if which == "sqdist":
        out = run(fastrbf.sqdist, ["X", "Y", "out", "n_threads"], X=X, Y=Y, out=out_arg, n_threads=threads)
        if out is None:
            return
        assert out_arg is None or out is out_arg
        Yr = X if Y is None else Y
        assert out.shape == (n, np.shape(Yr)[0]) and not np.any(np.isnan(out))
        assert out.dtype == (np.float32 if _all_float32(X, Y) else np.float64)
        ref = _reference(lambda: reference.sqdist(_f64(X), _f64(Yr)).astype(out.dtype))
        # an exact value beyond the dtype's range is inf (IEEE overflow), nothing else is
        assert_array_equal(np.isinf(out), np.isinf(ref))
        fin = np.isfinite(ref)
        _close(out[fin], ref[fin], 0.0, out.dtype)
        return
    kernel = data.draw(kernels, "kernel")
    gamma = data.draw(st.integers(0, 3).flatmap(
        lambda i: gammas if i else arrays((m if Y is not None else n,), good=10, positive=True)), "gamma")
    degree = data.draw(params(st.integers(1, 4)), "degree")
    coef0 = data.draw(params(st.sampled_from([1.0, 0.0, -0.5])), "coef0")
    kw = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
    if which == "gram":
        out = run(fastrbf.gram, ["X", "Y", "kernel", "gamma", "out", "n_threads", "degree", "coef0"], X=X, Y=Y,
                  out=out_arg, n_threads=threads, **kw)
        if out is None:
            return
        assert out_arg is None or out is out_arg
        Yr = X if Y is None else Y
        assert out.shape == (n, np.shape(Yr)[0]) and np.all(np.isfinite(out))
        assert out.dtype == (np.float32 if _all_float32(X, Y) else np.float64)
        ref = _reference(reference.gram, _f64(X), _f64(Yr), kernel=kernel, gamma=_f64(gamma), degree=degree,
                         coef0=float(coef0))
        if np.all(np.isfinite(ref)):
            _close(out, ref, np.abs(ref).max(), out.dtype)
        return
    Yg = X if Y is None else Y
    V = data.draw(arrays((_rows(Yg), *data.draw(st.sampled_from([(), (2,)])))), "V")
    out = run(fastrbf.gram_matvec, ["X", "Y", "V", "kernel", "gamma", "n_threads", "degree", "coef0"], X=X, Y=Yg, V=V,
              **kw)
    if out is None:
        return
    assert out.shape == (n, *np.shape(V)[1:]) and np.all(np.isfinite(out))
    assert out.dtype == (np.float32 if _all_float32(X, Yg, V) else np.float64)
    K = _reference(reference.gram, _f64(X), _f64(Yg), kernel=kernel, gamma=_f64(gamma), degree=degree,
                   coef0=float(coef0))
    if np.all(np.isfinite(K)):
        ref = K @ _f64(V)
        scale = (np.abs(K) @ np.abs(_f64(V))).max()
        _close(out, ref, scale, out.dtype)


# ---------------------------------------------------------------- linear algebra
@st.composite
def matrices(draw, n):
    """Symmetric positive definite matrices mostly (any dtype, scale), or bad ones."""
    kind = draw(st.sampled_from(["spd", "spd", "spd", "scaled", "other"]))
    if kind == "other":
        return draw(arrays((n, n), good=2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = rng.standard_normal((n, n))
    K = A @ A.T + draw(st.sampled_from([1.0, 1e-3, 0.0, -1.0])) * np.eye(n)
    if kind == "scaled":
        K = K * draw(st.sampled_from([1e-300, 1e-160, 1e-30, 1e30, 1e160, 1e300]))
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    if dtype == np.bool_:
        return np.eye(n, dtype=bool)
    if dtype.kind == "i":
        return np.round(np.clip(K, -1e6, 1e6)).astype(dtype)
    with np.errstate(over="ignore"):
        return K.astype(dtype)


@FUZZ
@given(st.data())
def test_fuzz_linear_algebra(data):
    n = data.draw(st.integers(1, 5))
    clean = data.draw(st.booleans(), "clean")  # half the calls: valid arguments besides K
    K = data.draw(matrices(n), "K")
    Y = data.draw(arrays(data.draw(st.sampled_from([(n,), (n, 2)])), good=4, clean=clean), "Y")
    alpha = data.draw(st.one_of(st.sampled_from([0.0, 1e-3, 1.0]) if clean else
                                params(st.sampled_from([0.0, 1e-3, 1.0])),
                                arrays((n,), good=2, clean=clean, positive=True)), "alpha")
    jitter = data.draw(st.sampled_from([None, None, "auto", 1e-6] if clean else
                                       [None, None, "auto", 1e-6, -1.0, "x", np.ones(2)]), "jitter")
    dtype = data.draw(st.sampled_from([None, None, np.float32, np.float64] if clean else
                                      [None, None, np.float32, np.float64, np.int32, "x"]), "dtype")
    names = ["K", "Y", "alpha", "overwrite", "jitter", "dtype", "n_threads"]
    if data.draw(st.booleans()):
        W = run(fastrbf.solve_regularized, names, K=K, Y=Y, alpha=alpha, jitter=jitter)
        fdtype = np.float64
    else:
        f = run(fastrbf.cholesky, names, K=K, alpha=alpha, jitter=jitter, dtype=dtype)
        if f is None:
            return
        assert np.isfinite(f.logdet()) or f.logdet() == -np.inf
        W = run(f.solve, names, Y=Y)
        fdtype = f.factor.dtype
    if W is None:
        return
    assert W.shape == np.shape(Y) and np.all(np.isfinite(W))
    A = _f64(K) + np.diag(np.broadcast_to(_f64(alpha), (n,)))
    cond = _reference(np.linalg.cond, A)
    if fdtype == np.float64 and jitter is None and cond < 1e8:
        ref = _reference(np.linalg.solve, A, _f64(Y))
        if np.all(np.isfinite(ref)):
            tol = 100 * cond * float(np.finfo(W.dtype).eps)
            assert np.abs(W - ref).max() <= tol * np.abs(ref).max() + 1e-300


# ---------------------------------------------------------------- models
@FUZZ
@given(st.data())
def test_fuzz_models(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 3))
    # half the calls are valid throughout, so that every model is fitted and checked
    clean = data.draw(st.booleans(), "clean")
    P = (lambda good: good) if clean else params
    X = data.draw(arrays((n, d), clean=clean), "X")
    Y = data.draw(arrays(data.draw(st.sampled_from([(n,), (n, 2)])), clean=clean), "Y")
    gamma = data.draw(P(st.sampled_from([1.0, 0.3, 3.0, 1e-3, 50.0])), "gamma")
    which = data.draw(st.sampled_from(["cholesky", "nystrom-pcg", "interpolate", "rbf_network"]))
    Xq = np.linspace(-1, 1, 3 * d).reshape(3, d)
    if which in ("cholesky", "nystrom-pcg"):
        alpha = data.draw(st.one_of(P(st.sampled_from([1e-2, 1.0, 0.0])),
                                    arrays((n,), good=2, clean=clean, positive=True)), "alpha")
        kw = {"gamma": gamma, "alpha": alpha, "solver": which,
              "kernel": data.draw(st.sampled_from(["gaussian", "laplacian", "polynomial"]) if clean else
                                  st.one_of(st.sampled_from(["gaussian", "laplacian", "polynomial"]), kernels)),
              "fit_intercept": data.draw(st.sampled_from([False, True])),
              "degree": data.draw(P(st.sampled_from([2, 3]))),
              "coef0": data.draw(P(st.sampled_from([1.0]))),
              "seed": data.draw(st.sampled_from([None, 0, 3] if clean else [None, 0, 3, -1, 1.5, "x", True]))}
        if which == "nystrom-pcg":
            kw["n_landmarks"] = data.draw(P(st.integers(1, n)))
            kw["landmarks"] = data.draw(st.one_of(st.sampled_from(["uniform", "kmeans"] if clean else
                                                                  ["uniform", "kmeans", "grid"]),
                                                  arrays((2, d), good=3, clean=clean)))
            kw["tol"] = data.draw(P(st.sampled_from([1e-7])))
            kw["max_iter"] = data.draw(P(st.sampled_from([50])))
            if not isinstance(kw["landmarks"], str):
                kw["n_landmarks"] = None
        names = ["X", "Y", "gamma", "alpha", "kernel", "fit_intercept", "degree", "coef0", "jitter", "solver",
                 "n_landmarks", "landmarks", "tol", "max_iter", "seed", "n_threads"]
        model = run(fastrbf.kernel_ridge, names, X=X, Y=Y, **kw)
        if model is None:
            return
        pred = model.predict(Xq)
        assert pred.shape == (3, *np.shape(Y)[1:]) and np.all(np.isfinite(pred))
        if (which == "cholesky" and kw["kernel"] == "gaussian" and not kw["fit_intercept"] and _finite_scalar(alpha)
                and alpha >= 1e-2 and np.isscalar(gamma)):
            ref = _reference(reference.kernel_ridge, _f64(X), _f64(Y), gamma=float(gamma), alpha=float(alpha))
            W = model.weights if np.ndim(Y) == 2 else model.weights[:, 0]
            _close(W, ref, np.abs(ref).max() * 1e-3, np.float32)
        return
    if which == "interpolate":
        alpha = data.draw(st.one_of(P(st.sampled_from([0.0, 1e-2])),
                                    arrays((n,), good=2, clean=clean, positive=True)), "alpha")
        kernel = data.draw(st.sampled_from(["thin_plate_spline", "gaussian", "cubic"]) if clean else
                             st.one_of(st.sampled_from(["thin_plate_spline", "gaussian", "cubic"]), kernels))
        degree = data.draw(st.one_of(st.none(), P(st.integers(-1, 2))) if clean else
                             st.one_of(st.none(), P(st.integers(-1, 2)), st.sampled_from([40, 10**6])))
        names = ["X", "Y", "kernel", "gamma", "degree", "alpha", "n_threads"]
        model = run(fastrbf.interpolate, names, X=X, Y=Y, kernel=kernel, gamma=gamma, degree=degree, alpha=alpha)
        if model is None:
            return
        pred = model.predict(Xq)
        assert pred.shape == (3, *np.shape(Y)[1:]) and np.all(np.isfinite(pred))
        if _finite_scalar(alpha) and alpha >= 1e-2 and kernel == "gaussian" and np.abs(_f64(X)).max() < 1e3:
            powers = model.poly_powers
            deg = int(powers.sum(axis=1).max()) if powers.shape[0] else -1
            ref = _reference(reference.interpolate, _f64(X), _f64(Y), Xq, kernel=kernel, gamma=model.gamma,
                             degree=deg, alpha=float(alpha))
            if np.all(np.isfinite(ref)):
                _close(pred, ref, np.abs(_f64(Y)).max() * 1e-3, np.float32)
        return
    n_centers = data.draw(P(st.integers(1, n)), "n_centers")
    centers = data.draw(st.one_of(st.sampled_from(["kmeans", "all"] if clean else ["kmeans", "all", "grid"]),
                                   arrays((2, d), good=3, clean=clean)), "centers")
    alpha = data.draw(P(st.sampled_from([0.0, 1e-2])), "alpha")
    learn = data.draw(st.sampled_from([False, False, True] if clean else [False, False, True, "yes"]), "learn_gamma")
    classify = data.draw(st.sampled_from([False, False, True]), "classify")
    validation = data.draw(st.sampled_from([None, None, (X, Y)] if clean else
                                           [None, None, "x", (X, Y), (Xq, np.zeros(3))]), "validation")
    kmeans = isinstance(centers, str) and centers == "kmeans"
    kw = {"gamma": gamma, "n_centers": n_centers if kmeans else None, "centers": centers, "alpha": alpha,
          "learn_gamma": learn, "classify": classify, "validation": validation,
          "kernel": data.draw(st.just("gaussian") if clean else st.one_of(st.just("gaussian"), kernels)),
          "bias": data.draw(st.sampled_from([True, False])),
          "per_center": data.draw(st.sampled_from([False, True])),
          "gamma_tol": data.draw(P(st.just(1e-4))), "max_gamma_iter": data.draw(P(st.just(3))),
          "seed": data.draw(st.sampled_from([None, 0] if clean else [None, 0, -1, "x"])),
          "max_iter": data.draw(P(st.just(20)))}
    names = ["X", "Y", "gamma", "n_centers", "centers", "alpha", "bias", "kernel", "classify", "seed", "max_iter",
             "n_init", "learn_gamma", "per_center", "validation", "gamma_tol", "max_gamma_iter", "n_threads"]
    net = run(fastrbf.rbf_network, names, X=X, Y=Y, **kw)
    if net is None:
        return
    s = net.decision_function(Xq)
    assert s.shape[0] == 3 and np.all(np.isfinite(s))
    if not classify and not learn and kw["kernel"] == "gaussian" and _finite_scalar(alpha) and alpha > 0:
        W, b = _reference(reference.rbf_network, _f64(X), _f64(Y), net.centers, gamma=net.gamma, alpha=float(alpha),
                          bias=kw["bias"])
        fit = _reference(reference.rbf_design, _f64(Xq), net.centers, gamma=net.gamma) @ W + b
        fit = fit[:, 0] if np.ndim(Y) == 1 else fit
        if np.all(np.isfinite(fit)):
            _close(s, fit, np.abs(fit).max() * 1e-3 + 1e-12, np.float32)


@pytest.mark.parametrize("fn", [fastrbf.sqdist, fastrbf.gram])
def test_fuzz_helpers_accept_good_input(fn):
    # the strategies do produce computable input: a plain call goes through the checks
    out = run(fn, ["X"], X=np.eye(3))
    assert out is not None and out.shape == (3, 3)
