"""Property tests with random bad input for the Gaussian processes (gp_log_marginal_likelihood,
gp_regression, GPModel.predict) and the kernel approximations (random_fourier(...).transform,
nystroem(...).transform).

Every call must either raise a ValueError/TypeError/MemoryError (for the GP also the
documented NotPositiveDefiniteError of a singular covariance) whose message names, in
backticks, arguments of the call, or return a correct result: the right shape and dtype,
finite values from finite input, equal to the NumPy reference where that is cheap and well
conditioned.  Inputs are never modified.
"""

import pickle
import re

import numpy as np
import pytest
from helpers import DEPRECATED_GP, TOL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastrbf import (
    NotPositiveDefiniteError,
    gp_log_marginal_likelihood,
    gp_regression,
    gram,
    nystroem,
    random_fourier,
    reference,
)

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    derandomize=True)

# ---------------------------------------------------------------- strategies
MAGNITUDES = st.sampled_from([1.0, 1.0, 1.0, 1e-160, 1e160, 1e3, 1e-3])
MALFORMED = [
    np.zeros((0, 2)), np.zeros(3), np.zeros((2, 2, 2)), np.ones((2, 2), dtype=complex),
    np.array([[1, "a"]], dtype=object), [["1.0", "2.0"]], [[1.0, 2.0], [3.0]], [1.0, [2.0]], "abc",
    None, 3.0, [[True, False]], [], [[]],
]
BAD_NUMBERS = [0, -1.0, np.nan, np.inf, 1e308, "1", "abc", True, None, 1 + 1j, [1.0]]


@st.composite
def good_array(draw, shape):
    """A finite array of ``shape`` (float64/float32/int64, as a list at times) of any magnitude."""
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32, np.int64]))
    a = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape) * draw(MAGNITUDES)
    if dtype == np.int64:
        a = np.round(np.clip(a, -100, 100))
    a = np.clip(a, -1e38, 1e38) if dtype == np.float32 else a
    a = a.astype(dtype)
    return a.tolist() if draw(st.integers(0, 9)) == 0 else a


@st.composite
def bad_array(draw, shape):
    """An array with a NaN/inf, of the wrong shape, or not an array of real numbers at all."""
    kind = draw(st.sampled_from(["nonfinite", "shape", "malformed"]))
    if kind == "nonfinite":
        a = np.random.default_rng(draw(st.integers(0, 2**16))).standard_normal(shape)
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        return a
    if kind == "shape":
        return np.ones(tuple(s + 1 for s in shape))
    return draw(st.sampled_from(MALFORMED))


def pick(draw, bad, name, good, bad_values):
    """``name``'s value: from ``bad_values`` when ``name`` is the one argument made bad."""
    return draw(bad_values if bad == name else good)


def _backticked(msg):
    names = set()
    for tok in re.findall(r"`([^`]+)`", msg):
        head = re.match(r"[A-Za-z_]\w*", tok)
        if head:
            names.add(head.group(0))
    return names


def _check_error(exc, params):
    """The error names, in backticks, at least one argument of the call and nothing that
    is not one."""
    msg = str(exc)
    names = _backticked(msg)
    assert names, f"{type(exc).__name__} names no argument: {msg}"
    assert names <= params, f"{type(exc).__name__} names {sorted(names - params)}, not arguments of the call: {msg}"


def _snapshot(values):
    return [pickle.dumps(v) for v in values]


GP_PARAMS = {"X", "y", "theta", "theta0", "noise", "kernel", "grad", "n_threads", "optimize", "n_restarts",
             "bounds", "seed", "normalize_y", "return_var"}
GP_ERRORS = (ValueError, TypeError, MemoryError, NotPositiveDefiniteError)
MAP_ERRORS = (ValueError, TypeError, MemoryError)


def _moderate(*arrays_):
    """All finite arrays of real numbers with 1e-3 <= max |v| <= 10 (well conditioned)."""
    for a in arrays_:
        a = np.asarray(a)
        if a.dtype.kind not in "iuf" or a.size == 0 or not np.isfinite(a).all():
            return False
        top = float(np.abs(a).max())
        if not 1e-3 <= top <= 10:
            return False
    return True


# ---------------------------------------------------------------- Gaussian processes
GP_BAD = ["X", "y", "kernel", "theta", "noise", "grad", "optimize", "n_restarts", "bounds", "seed", "normalize_y",
          "query", "return_var"]


@st.composite
def gp_cases(draw):
    """All arguments of a GP call; at most one of them bad."""
    bad = draw(st.sampled_from([None] * 6 + GP_BAD))
    n, d = draw(st.integers(1, 6)), draw(st.integers(1, 3))
    c = {"bad": bad}
    c["X"] = pick(draw, bad, "X", good_array((n, d)), bad_array((n, d)))
    c["y"] = pick(draw, bad, "y", good_array((n,)), bad_array((n,)))
    c["kernel"] = pick(draw, bad, "kernel", st.sampled_from(["prml", "gaussian"]),
                       st.sampled_from(["rbf", ["prml"], None, 1]))
    k = 4 if c["kernel"] == "prml" else 2
    c["theta"] = pick(draw, bad, "theta",
                      st.lists(st.sampled_from([1.0, 0.5, 2.0, 1e-160, 1e160, 1e-3, 1e3, 3]), min_size=k, max_size=k),
                      st.sampled_from([[1 + 1j] * k, ["1"] * k, [True] * k, [[1.0, 2.0], [3.0]], np.ones(k, dtype=object),
                                       "1", None, np.ones((k, 1)), [1.0] * (k + 1), [1.0] * (k - 1) + [-1.0],
                                       [1.0] * (k - 1) + [np.nan], [1.0] * (k - 1) + [np.inf]]))
    c["noise"] = pick(draw, bad, "noise", st.sampled_from([0.1, 1.0, 1e-2, 1e-6, 1e160, np.float32(0.5)]),
                      st.sampled_from(BAD_NUMBERS))
    c["grad"] = pick(draw, bad, "grad", st.sampled_from([True, False]), st.sampled_from(["yes", 1, None]))
    c["optimize"] = pick(draw, bad, "optimize", st.sampled_from([False, False, False, True]),
                         st.sampled_from(["no", None, 1]))
    c["n_restarts"] = pick(draw, bad, "n_restarts", st.sampled_from([0, 1, np.int64(0)]),
                           st.sampled_from([-1, 1.5, True, "2", None]))
    c["bounds"] = pick(draw, bad, "bounds", st.sampled_from([None, [[1e-4, 1e4]] * (k + 1)]),
                       st.sampled_from([[[1e-3, 1e3]] * k, [[1.0, 0.5]] * (k + 1), [["1", "2"]] * (k + 1),
                                        [[1e-3, 1e3], [1.0]], np.full((k + 1, 2), np.nan), [[-1.0, 1.0]] * (k + 1),
                                        np.ones((k + 1, 2), dtype=complex), "abc"]))
    c["seed"] = pick(draw, bad, "seed", st.sampled_from([0, 1, None, np.random.default_rng(0)]),
                     st.sampled_from([-1, 1.5, "abc", True]))
    c["normalize_y"] = pick(draw, bad, "normalize_y", st.sampled_from([False, True]), st.sampled_from([1, "yes", None]))
    c["query"] = pick(draw, bad, "query", good_array((draw(st.integers(1, 4)), d)), bad_array((2, d)))
    c["return_var"] = pick(draw, bad, "return_var", st.sampled_from([False, True]), st.sampled_from(["yes", 1]))
    return c


def _float_theta(theta):
    return np.asarray(theta, dtype=np.float64)


def _reference_checkable(c, *extra):
    """Moderate, well-conditioned data and parameters: the explicit-inverse reference is accurate."""
    th = _float_theta(c["theta"])
    return (_moderate(c["X"], c["y"], *extra) and 0.1 <= float(c["noise"]) <= 10 and th.min() >= 0.1
            and th.max() <= 10)


@SETTINGS
@given(c=gp_cases())
def test_gp_log_marginal_likelihood_bad_input(c):
    args = [c["X"], c["y"], c["theta"]]
    before = _snapshot(args)
    try:
        out = gp_log_marginal_likelihood(*args, noise=c["noise"], kernel=c["kernel"], grad=c["grad"])
    except GP_ERRORS as exc:
        _check_error(exc, GP_PARAMS)
    else:
        lml, g = out if c["grad"] else (out, None)
        assert isinstance(lml, float) and np.isfinite(lml)
        if c["grad"]:
            assert g.shape == (len(c["theta"]) + 1,) and g.dtype == np.float64 and np.isfinite(g).all()
        if _reference_checkable(c):
            rl, rg = reference.gp_log_marginal_likelihood(c["X"], c["y"], _float_theta(c["theta"]), noise=c["noise"])
            assert abs(lml - rl) <= 1e-7 * max(1.0, abs(rl))
            if c["grad"]:
                np.testing.assert_allclose(g, rg, rtol=1e-6, atol=1e-6)
    assert _snapshot(args) == before


@SETTINGS
@given(c=gp_cases())
def test_gp_regression_and_predict_bad_input(c):
    args = [c["X"], c["y"], c["theta"], c["bounds"], c["query"]]
    before = _snapshot(args)
    try:
        model = gp_regression(c["X"], c["y"], kernel=c["kernel"], theta0=c["theta"], noise=c["noise"],
                              optimize=c["optimize"], n_restarts=c["n_restarts"], bounds=c["bounds"], seed=c["seed"],
                              normalize_y=c["normalize_y"])
    except GP_ERRORS as exc:
        _check_error(exc, GP_PARAMS)
        assert _snapshot(args) == before
        return
    except UserWarning as w:  # the documented warning: the optimum sits on a bound
        assert "`bounds`" in str(w)
        return
    n, d = np.shape(c["X"])
    assert model.X_train.shape == (n, d) and np.isfinite(model.alpha).all()
    assert np.isfinite(model.log_marginal_likelihood)
    assert not np.shares_memory(model.X_train, c["X"])
    try:
        p = model.predict(c["query"], return_var=c["return_var"])
    except GP_ERRORS as exc:
        _check_error(exc, GP_PARAMS)
    else:
        mean = p.mean if c["return_var"] else p
        q = np.asarray(c["query"])
        f32 = all(np.asarray(v).dtype == np.float32 for v in (q, c["X"], c["y"]))
        dtype = np.float32 if f32 else np.float64
        assert mean.shape == (q.shape[0],) and mean.dtype == dtype and np.isfinite(mean).all()
        if c["return_var"]:
            assert p.var.shape == mean.shape and p.var.dtype == dtype and np.isfinite(p.var).all()
            assert (p.var >= 0).all()
        if not c["optimize"] and not c["normalize_y"] and _reference_checkable(c, q):
            rm, rv = reference.gp_predict(np.asarray(c["X"], float), np.asarray(c["y"], float), q.astype(float),
                                          _float_theta(c["theta"]), noise=float(c["noise"]))
            tol = 1e-5 if f32 else 1e-7
            np.testing.assert_allclose(mean, rm, rtol=tol, atol=tol * max(1.0, float(np.abs(rm).max())))
            if c["return_var"]:
                np.testing.assert_allclose(p.var, rv, rtol=tol, atol=tol * max(1.0, float(np.abs(rv).max())))
    assert _snapshot(args) == before


# ---------------------------------------------------------------- kernel approximations
RFF_PARAMS = {"n_features", "n_components", "gamma", "seed", "kind", "dtype", "X", "out", "n_threads"}
NY_PARAMS = {"X", "landmarks", "kernel", "gamma", "alpha", "method", "seed", "n_threads", "degree", "coef0",
             "max_iter"}


@st.composite
def rff_cases(draw):
    bad = draw(st.sampled_from([None] * 4 + ["n_features", "n_components", "gamma", "seed", "kind", "dtype", "X"]))
    c = {}
    c["n_features"] = pick(draw, bad, "n_features", st.sampled_from([1, 2, 3, np.int64(2)]),
                           st.sampled_from([0, -1, 2.0, "2", True, None, 10**12]))
    kind = c["kind"] = pick(draw, bad, "kind", st.sampled_from(["cos", "cos_sin"]), st.sampled_from(["sin", None, 1]))
    c["n_components"] = pick(draw, bad, "n_components", st.sampled_from([2, 8, 1030] + ([1, 9] if kind != "cos_sin" else [])),
                             st.sampled_from([0, 2.5, "4", None, 10**12] + ([7] if kind == "cos_sin" else [])))
    c["dtype"] = pick(draw, bad, "dtype", st.sampled_from([np.float64, np.float32, "float32", None]),
                      st.sampled_from(["x", np.int64, complex, [1]]))
    top = 1e73 if np.dtype(c["dtype"] if c["dtype"] in (np.float32, "float32") else np.float64) == np.float32 else 1e308
    c["gamma"] = pick(draw, bad, "gamma", st.sampled_from([0.5, 1.0, 1e-160, 1e160, top, np.float32(2.0)]),
                      st.sampled_from([*BAD_NUMBERS, 1e74, 1e300] if c["dtype"] in (np.float32, "float32") else BAD_NUMBERS))
    c["seed"] = pick(draw, bad, "seed", st.sampled_from([0, None, 3]), st.sampled_from([-1, 1.5, "abc"]))
    nf = c["n_features"] if bad != "n_features" else 2
    c["X"] = pick(draw, bad, "X", good_array((draw(st.integers(1, 5)), nf)), bad_array((2, nf)))
    return c


@SETTINGS
@given(c=rff_cases())
def test_random_fourier_transform_bad_input(c):
    X = c.pop("X")
    before = _snapshot([X])
    try:
        rff = random_fourier(c.pop("n_features"), c.pop("n_components"), **c)
        assert np.isfinite(rff.weights).all() and np.isfinite(rff.offset).all()
        Z = rff.transform(X)
    except MAP_ERRORS as exc:
        _check_error(exc, RFF_PARAMS)
    else:
        Xa = np.asarray(X)
        dt = np.float32 if (Xa.dtype == np.float32 and rff.dtype == np.float32) else np.float64
        assert Z.shape == (Xa.shape[0], rff.n_components) and Z.dtype == dt and np.isfinite(Z).all()
        assert np.abs(Z).max() <= np.sqrt(2.0 / rff.n_components) * (1 + 1e-6)
        with np.errstate(over="ignore", invalid="ignore"):
            P = Xa.astype(np.float64) @ rff.weights.astype(np.float64)
        if np.isfinite(P).all() and np.abs(P).max() <= 100:  # the projections are the same numbers in both
            ref = reference.random_fourier_transform(Xa, rff.weights, rff.offset) if rff.kind == "cos" else \
                reference.random_fourier_pair_transform(Xa, rff.weights)
            np.testing.assert_allclose(Z, ref, rtol=0, atol=TOL[dt] * 4 * np.sqrt(2.0 / rff.n_components) * 100)
    assert _snapshot([X]) == before


@st.composite
def nystroem_cases(draw):
    names = ["X", "landmarks", "kernel", "gamma", "alpha", "method", "seed", "degree", "coef0", "max_iter", "query"]
    bad = draw(st.sampled_from([None] * 4 + names))
    n = draw(st.integers(1, 8))
    c = {}
    c["X"] = pick(draw, bad, "X", good_array((n, 2)), bad_array((n, 2)))
    as_array = draw(st.booleans())
    c["landmarks"] = pick(draw, bad, "landmarks",
                          good_array((draw(st.integers(1, 5)), 2)) if as_array else st.integers(1, n),
                          st.one_of(st.sampled_from([0, n + 1, -1, 2.5, True, "3", None]), bad_array((3, 2))))
    c["kernel"] = pick(draw, bad, "kernel", st.sampled_from(["gaussian", "gaussian", "laplacian", "inverse_multiquadric",
                                                             "polynomial", "tanh"]),
                       st.sampled_from(["rbf", ["gaussian"], None]))
    c["gamma"] = pick(draw, bad, "gamma", st.sampled_from([0.5, 1.0, 1e-160, 1e160]), st.sampled_from(BAD_NUMBERS))
    c["alpha"] = pick(draw, bad, "alpha", st.sampled_from([0.0, 1e-3, 1.0]),
                      st.sampled_from([-1.0, np.nan, np.inf, "0", None, 1j]))
    array_landmarks = not isinstance(c["landmarks"], (int, np.integer))
    c["method"] = pick(draw, bad, "method", st.sampled_from([None] if array_landmarks else [None, "kmeans", "random"]),
                       st.sampled_from(["grid", ["random"], 1] + (["random"] if array_landmarks else [])))
    c["seed"] = pick(draw, bad, "seed", st.sampled_from([0, 1, None]), st.sampled_from([-1, 1.5, "abc"]))
    c["degree"] = pick(draw, bad, "degree", st.sampled_from([3, 2]), st.sampled_from([0, 2.5, "3"]))
    c["coef0"] = pick(draw, bad, "coef0", st.sampled_from([1.0, 0.0]), st.sampled_from([np.nan, "1", None]))
    c["max_iter"] = pick(draw, bad, "max_iter", st.sampled_from([300, 5]), st.sampled_from([0, 1.5, "10"]))
    c["query"] = pick(draw, bad, "query", good_array((draw(st.integers(1, 4)), 2)), bad_array((2, 2)))
    return c


@SETTINGS
@given(c=nystroem_cases())
def test_nystroem_transform_bad_input(c):
    X, landmarks, query = c.pop("X"), c.pop("landmarks"), c.pop("query")
    before = _snapshot([X, landmarks, query])
    try:
        ny = nystroem(X, landmarks, **c)
        assert np.isfinite(ny.landmarks).all() and np.isfinite(ny.normalization).all()
        Z = ny.transform(query)
    except MAP_ERRORS as exc:
        _check_error(exc, NY_PARAMS)
    else:
        q = np.asarray(query)
        dt = np.float32 if (q.dtype == np.float32 and ny.dtype == np.float32) else np.float64
        assert Z.shape == (q.shape[0], ny.n_components) and Z.dtype == dt and np.isfinite(Z).all()
        if isinstance(landmarks, np.ndarray):
            assert not np.shares_memory(ny.landmarks, landmarks)
        if ny.kernel == "gaussian" and _moderate(q, ny.landmarks):
            Kmm = gram(ny.landmarks, gamma=ny.gamma) + float(c["alpha"]) * np.eye(ny.n_components)
            if np.linalg.cond(Kmm) < 1e6:
                ref = reference.nystroem_transform(q, ny.landmarks, gamma=ny.gamma, alpha=float(c["alpha"]))
                np.testing.assert_allclose(Z, ref, rtol=0, atol=1e-6 if dt == np.float64 else 1e-4)
    assert _snapshot([X, landmarks, query]) == before
