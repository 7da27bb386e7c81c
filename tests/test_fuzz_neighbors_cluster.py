"""Property tests with random bad input for the neighbour and clustering families.

Each call gets random data (wrong dtypes, shapes, ndim, NaN/inf, huge and tiny
magnitudes, ragged lists, empty arrays) and random parameters (negative, zero, NaN,
strings, bools, floats for ints).  It must either raise a ValueError, TypeError or
MemoryError whose message names (in backticks) only arguments of the call, or return a
correct result: right shape and dtype, finite where the input was finite (a squared
distance or inertia is ``inf`` only where its exact value exceeds the float range),
checked against exact rational arithmetic (``fractions``) or the NumPy reference.
Inputs are never modified.
"""

import copy
import inspect
import re
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastrbf
from fastrbf import reference

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALES = {np.float64: [1.0, 1.0, 1e160, 1e-160, 1e300, 1e-300, 2e19],
          np.float32: [np.float32(1.0), np.float32(1.0), np.float32(2e19), np.float32(1e30), np.float32(1e-20),
                       np.float32(1e-35)]}
BAD_INTS = [0, -1, 2.0, "2", True, None, float("nan")]
BAD_THREADS = [0, "2", True, 2.0]
YSCALES = {np.float64: [1.0, 1e160, 1e-160], np.float32: [1.0, 1e30, 1e-30]}


@st.composite
def data_arrays(draw, n, d, dtype, rng, faulty):
    """A valid (n, d) input of one magnitude (an array, or a list, a bool or an int
    array), or, when ``faulty``, one of many malformed inputs."""
    scale = draw(st.sampled_from(SCALES[dtype]))
    kind = draw(st.sampled_from(["normal", "normal", "int", "dup"]))
    if kind == "normal":
        A = rng.standard_normal((n, d))
    elif kind == "int":
        A = rng.integers(-3, 4, (n, d)).astype(np.float64)
    else:
        A = np.repeat(rng.standard_normal((1, d)), n, axis=0)
        A[n // 2 :] += 1.0
    A = (A * scale).astype(dtype)
    if not faulty:
        form = draw(st.sampled_from(["array"] * 6 + ["bool", "int", "list"]))
        if form == "bool":
            return A != 0
        if form == "int":
            return rng.integers(-5, 6, (n, d))
        return A.tolist() if form == "list" else A
    fault = draw(st.sampled_from(["nan", "inf", "ndim1", "ndim3", "empty", "ragged", "str", "complex", "none"]))
    if fault in ("nan", "inf"):
        A[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = np.nan if fault == "nan" else -np.inf
        return A
    return {"ndim1": A.ravel(), "ndim3": A[None], "empty": np.empty((0, d), dtype=dtype),
            "ragged": [[1.0] * d, [1.0] * (d + 1)], "str": np.full((n, d), "a"),
            "complex": A.astype(np.complex128), "none": None}[fault]


def _pick(draw, name, faulty, good, bad):
    """A value for argument ``name``: a bad one when it is the faulty argument."""
    return draw(st.sampled_from(bad if name == faulty else good))


def _names(fn):
    return set(inspect.signature(fn).parameters)


def _check_error(exc, fn):
    msg = str(exc)
    named = re.findall(r"`([A-Za-z_]\w*)`", msg)
    assert named, f"the message names no argument: {msg!r}"
    assert set(named) <= _names(fn), f"the message names {named}, not all arguments of {fn.__name__}: {msg!r}"


def _snapshot(args, kwargs):
    return copy.deepcopy((args, kwargs))


def _assert_unmodified(before, args, kwargs):
    for a, b in zip(before[0], args, strict=True):
        _assert_same(a, b)
    for key, a in before[1].items():
        _assert_same(a, kwargs[key])


def _assert_same(a, b):
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    elif isinstance(a, np.random.Generator):
        pass
    else:
        assert type(a) is type(b)
        if isinstance(a, float) and a != a:
            assert b != b
        else:
            assert a == b


def _call(fn, args, kwargs, must_fail):
    """The result, or None after a well-named refusal."""
    before = _snapshot(args, kwargs)
    try:
        out = fn(*args, **kwargs)
    except fastrbf.EmptyClusterError:
        assert kwargs.get("empty") == "raise"  # the documented outcome it asked for
        _assert_unmodified(before, args, kwargs)
        return None
    except (ValueError, TypeError, MemoryError) as exc:
        _check_error(exc, fn)
        _assert_unmodified(before, args, kwargs)
        return None
    _assert_unmodified(before, args, kwargs)
    assert not must_fail, f"{fn.__name__} accepted bad input"
    return out


def _as_float(v):
    """A valid array-like input as the float array fastrbf computes with."""
    a = np.asarray(v)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


def _exact_sq(x, y):
    return sum((Fraction(float(a)) - Fraction(float(b))) ** 2 for a, b in zip(x, y, strict=True))


def _atol(dtype, M):
    """The absolute error allowed on a squared distance among points within ``M`` of
    the origin: a few subnormals, at the scale at which fastrbf computes (data beyond
    about 2**500, float32: 2**50, are scaled down to there; see the module docstrings)."""
    s = max(1.0, float(M) / 2.0 ** (500 if dtype == np.float64 else 50))
    return Fraction(float(np.finfo(dtype).smallest_subnormal)) * 4 * Fraction(s) ** 2


def _close(got, exact, dtype, d, M):
    """``got`` (a squared distance in ``dtype``) is the exact value to a few ulp, or inf
    when the exact value is beyond the float range."""
    fi = np.finfo(dtype)
    rtol = 4 * (d + 2) * float(fi.eps)
    big = Fraction(float(fi.max))
    if exact > big * (1 + Fraction(rtol)):
        return got == np.inf
    if exact > big * (1 - Fraction(rtol)):
        return True
    return np.isfinite(got) and abs(Fraction(float(got)) - exact) <= Fraction(rtol) * exact + _atol(dtype, M)


def _ranking_ok(chosen, exact_row, pos_sorted, dtype, d, M):
    """The exact distance of the chosen point is the pos-th smallest up to rounding."""
    rtol = Fraction(8 * (d + 2) * float(np.finfo(dtype).eps))
    return exact_row[chosen] <= pos_sorted * (1 + rtol) + 2 * _atol(dtype, M)


def _max_abs(*arrays):
    return max(float(np.abs(a.astype(np.float64)).max()) for a in arrays)


def _result_dtype(*arrays):
    return np.float32 if all(np.asarray(a).dtype == np.float32 for a in arrays) else np.float64


# ------------------------------------------------------------------ neighbours


@st.composite
def neighbour_calls(draw):
    fn = draw(st.sampled_from([fastrbf.knn, fastrbf.knn_predict, fastrbf.nadaraya_watson, fastrbf.rbf_vote]))
    params = [*sorted(_names(fn)), "features"]
    faulty = draw(st.sampled_from([None] * len(params) + params))  # at most one bad argument
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    n, m, d = draw(st.integers(1, 7)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    X = draw(data_arrays(n, d, dtype, rng, faulty == "X"))
    Xq = draw(data_arrays(m, d, dtype, rng, faulty == "Xq"))
    if faulty == "features":
        Xq = rng.standard_normal((m, d + 1))
    args: list = [X]
    kwargs: dict = {}
    classify = False
    if fn in (fastrbf.knn_predict, fastrbf.rbf_vote):
        classify = draw(st.booleans())
        kwargs["classify"] = _pick(draw, "classify", faulty, [classify], ["yes", 1, None])
    if fn is not fastrbf.knn:
        if classify:
            Y = draw(st.sampled_from([rng.integers(0, 3, n), np.array(["a", "b"])[rng.integers(0, 2, n)],
                                      rng.integers(0, 2, n).astype(np.float64)]))
        else:
            shape = (n, 2) if draw(st.booleans()) else (n,)
            Y = (rng.standard_normal(shape) * draw(st.sampled_from(YSCALES[dtype]))).astype(dtype)
        if faulty == "Y":
            fault = draw(st.sampled_from(["short", "ndim3"] + ([] if classify else ["str"])
                                         + (["nan"] if Y.dtype.kind in "iuf" else [])))
            if fault == "nan":
                Y = Y.astype(np.float64)
                Y.flat[0] = np.nan
            else:
                Y = {"short": Y[: n - 1] if n > 1 else np.concatenate([Y, Y]), "ndim3": np.zeros((n, 1, 1)),
                     "str": np.full(n, "x")}[fault]
        args.append(Y)
    args.append(Xq)
    if fn in (fastrbf.knn, fastrbf.knn_predict):
        args.append(_pick(draw, "k", faulty, [1, 2, n, np.int64(1)], [*BAD_INTS, n + 1]))
    if fn in (fastrbf.nadaraya_watson, fastrbf.rbf_vote):
        kwargs["gamma"] = _pick(draw, "gamma", faulty, [1.0, 2.5, 1e-160, 1e160, 1e300, np.float32(3.0), 7],
                                [0.0, -1.0, float("nan"), float("inf"), "a", True, [1.0], None])
    if fn is fastrbf.knn_predict:
        kwargs["weights"] = _pick(draw, "weights", faulty, ["uniform", "distance"], ["gauss", None])
    if fn is fastrbf.nadaraya_watson:
        kwargs["kernel"] = _pick(draw, "kernel", faulty, ["gaussian", "laplacian"], ["cubic", 3])
        kwargs["return_grad"] = _pick(draw, "return_grad", faulty, [False], ["yes", 1, None])
    if fn is fastrbf.knn:
        kwargs["method"] = _pick(draw, "method", faulty, ["auto", "tree", "brute"], ["kd_tree", None, 1])
    if fn in (fastrbf.knn, fastrbf.nadaraya_watson):
        # powers of two: the rescaled data are exact, so the checks below compare with them
        kwargs["length_scale"] = _pick(draw, "length_scale", faulty, [None, 1.0, np.full(d, 2.0), 0.5],
                                       [0.0, -1.0, float("nan"), "a", np.ones(d + 1)])
    kwargs["n_threads"] = _pick(draw, "n_threads", faulty, [None, 1, 2, -1], BAD_THREADS)
    return fn, args, kwargs, faulty is not None


def _check_knn(X, Xq, k, out):
    idx, d2 = out
    Xf, Qf = _as_float(X), _as_float(Xq)
    dtype = _result_dtype(Xf, Qf)
    Xf, Qf = Xf.astype(dtype), Qf.astype(dtype)
    m, n, d = Qf.shape[0], Xf.shape[0], Xf.shape[1]
    assert idx.shape == (m, k) and d2.shape == (m, k) and idx.dtype == np.int64 and d2.dtype == dtype
    M = _max_abs(Xf, Qf)
    for i in range(m):
        exact = [_exact_sq(Qf[i], Xf[j]) for j in range(n)]
        srt = sorted(exact)
        assert len(set(idx[i].tolist())) == k and idx[i].min() >= 0 and idx[i].max() < n
        for p in range(k):
            assert _ranking_ok(idx[i, p], exact, srt[p], dtype, d, M)
            assert _close(d2[i, p], exact[idx[i, p]], dtype, d, M)


def _moderate(*arrays):
    """Data where the reference (float64, no rescaling) is accurate enough to compare."""
    return all(np.abs(_as_float(a)).max() < 10 for a in arrays)


@SETTINGS
@given(neighbour_calls())
def test_fuzz_neighbours(call):
    fn, args, kwargs, bad = call
    out = _call(fn, args, kwargs, bad)
    if out is None:
        return
    X = args[0]
    Xq = args[-2] if fn in (fastrbf.knn, fastrbf.knn_predict) else args[-1]
    ls = kwargs.get("length_scale")
    if ls is not None:  # the function sees the features divided by the scales (exact: powers of two)
        X = (_as_float(X) / ls).astype(_as_float(X).dtype)
        Xq = (_as_float(Xq) / ls).astype(_as_float(Xq).dtype)
    if fn is fastrbf.knn:
        _check_knn(X, Xq, args[2], out)
        return
    Y = np.asarray(args[1])
    m = np.asarray(Xq).shape[0]
    if kwargs.get("classify"):
        assert out.shape == (m,) and set(out.tolist()) <= set(Y.tolist())
        return
    Xf, Qf, Yf = _as_float(X), _as_float(Xq), _as_float(Y)
    dtype = np.float32 if _result_dtype(Xf, Qf) == np.float32 and Yf.dtype == np.float32 else np.float64
    assert out.dtype == dtype and out.shape == (m, *Y.shape[1:])
    assert np.all(np.isfinite(out)), "non-finite result from finite input"
    Y2 = Yf.reshape(Yf.shape[0], -1).astype(np.float64)
    o2 = out.reshape(m, -1).astype(np.float64)
    if fn in (fastrbf.knn_predict, fastrbf.nadaraya_watson):
        # a weighted mean of the targets
        tol = (1e-5 if dtype == np.float32 else 1e-12) * np.abs(Y2).max(axis=0)
        assert np.all(o2 >= Y2.min(axis=0) - tol) and np.all(o2 <= Y2.max(axis=0) + tol)
    gamma = kwargs.get("gamma")
    if fn is fastrbf.knn_predict or not _moderate(X, Xq) or not 1e-3 <= float(gamma) <= 10 \
            or not 1e-100 < np.abs(Y2).max() < 1e100:
        return  # where the plain float64 reference may underflow
    if fn is fastrbf.nadaraya_watson:
        with np.errstate(under="ignore"):
            K = reference.gram(Qf.astype(np.float64), Xf.astype(np.float64), kernel=kwargs["kernel"], gamma=float(gamma))
        if np.all(K.sum(axis=1) > 1e-100):
            ref = reference.nadaraya_watson(Xf, Y2, Qf, gamma=float(gamma), kernel=kwargs["kernel"])
            rtol = 1e-4 if dtype == np.float32 else 1e-9
            np.testing.assert_allclose(o2, ref, rtol=rtol, atol=rtol * np.abs(Y2).max())
    else:
        with np.errstate(under="ignore"):
            ref = reference.rbf_vote(Xf, Y2, Qf, gamma=float(gamma))
        rtol = 1e-4 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(o2, ref, rtol=rtol, atol=rtol * np.abs(Y2).max())


# ------------------------------------------------------------------ clustering


@st.composite
def cluster_calls(draw):
    fn = draw(st.sampled_from([fastrbf.lloyd_assign, fastrbf.lloyd_update, fastrbf.kmeans]))
    params = sorted(_names(fn))
    faulty = draw(st.sampled_from([None] * len(params) + params))  # at most one bad argument
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    n, d = draw(st.integers(1, 8)), draw(st.integers(1, 3))
    args: list = [draw(data_arrays(n, d, dtype, rng, faulty == "X"))]
    kwargs: dict = {}
    if fn is fastrbf.lloyd_assign:
        args.append(draw(data_arrays(draw(st.integers(1, 4)), d, dtype, rng, faulty == "centers")))
    else:
        K = _pick(draw, "n_clusters", faulty, [1, 2, n, np.int64(1)] if fn is fastrbf.kmeans else [1, 2, n + 3],
                  [*BAD_INTS, n + 1] if fn is fastrbf.kmeans else BAD_INTS)
        if fn is fastrbf.lloyd_update:
            Kv = int(K) if faulty != "n_clusters" else 2
            labels = _pick(draw, "labels", faulty, [rng.integers(0, Kv, n)],
                           [np.full(n, Kv), np.full(n, -1), rng.random(n), np.zeros(n + 1, dtype=np.int64)])
            args += [labels, K]
        else:
            args.append(K)
        kwargs["sample_weight"] = _pick(draw, "sample_weight", faulty,
                                        [None, rng.uniform(0.5, 2.0, n), rng.uniform(0.5, 2.0, n) * 1e300,
                                         rng.uniform(0.5, 2.0, n) * 1e-310],
                                        [-np.ones(n), np.full(n, np.nan), np.zeros(n), np.ones(n + 1), np.full(n, "w")])
        if fn is fastrbf.kmeans:
            good_init = ["k-means++", "random"]
            if faulty != "n_clusters":
                good_init.append(rng.standard_normal((int(K), d)).astype(dtype))
            kwargs["init"] = _pick(draw, "init", faulty, good_init, ["kmeans", np.zeros((n + 2, d)), None])
            kwargs["n_init"] = _pick(draw, "n_init", faulty,
                                     [1, 2] if isinstance(kwargs["init"], str) else [1], [0, 1.5, "1"])
            kwargs["max_iter"] = _pick(draw, "max_iter", faulty, [5, 300], [0, -1, 2.0])
            kwargs["tol"] = _pick(draw, "tol", faulty, [1e-4, 0.0, 1e300], [-1.0, float("nan"), "0"])
            kwargs["seed"] = _pick(draw, "seed", faulty, [0, 7, None, np.random.default_rng(3)], [-1, 1.5, "abc", True])
            kwargs["empty"] = _pick(draw, "empty", faulty, ["relocate", "raise"], ["drop", None])
            kwargs["progress"] = _pick(draw, "progress", faulty, [False, [].append], [1, None, "yes"])
            kwargs["algorithm"] = _pick(draw, "algorithm", faulty, ["auto", "lloyd", "bounded"], ["elkan", None, 1])
    kwargs["n_threads"] = _pick(draw, "n_threads", faulty, [None, 1, 2, -1], BAD_THREADS)
    return fn, args, kwargs, faulty is not None


def _check_assign(Xf, Cf, labels, d2, dtype, w=None):
    n, d = Xf.shape
    assert labels.shape == (n,) and labels.dtype == np.int64
    assert labels.min() >= 0 and labels.max() < Cf.shape[0]
    total = Fraction(0)
    M = _max_abs(Xf, Cf)
    for i in range(n):
        exact = [_exact_sq(Xf[i], Cf[j]) for j in range(Cf.shape[0])]
        assert _ranking_ok(labels[i], exact, min(exact), dtype, d, M)
        if d2 is not None:
            assert _close(d2[i], exact[labels[i]], dtype, d, M)
        total += exact[labels[i]] * (Fraction(float(w[i])) if w is not None else 1)
    return total


@SETTINGS
@given(cluster_calls())
def test_fuzz_clustering(call):
    fn, args, kwargs, bad = call
    out = _call(fn, args, kwargs, bad)
    if out is None:
        return
    Xf = _as_float(args[0])
    n, d = Xf.shape
    if fn is fastrbf.lloyd_assign:
        Cf = _as_float(args[1])
        dtype = _result_dtype(Xf, Cf)
        labels, d2 = out
        assert d2.dtype == dtype and d2.shape == (n,)
        _check_assign(Xf.astype(dtype), Cf.astype(dtype), labels, d2, dtype)
        return
    dtype = _result_dtype(Xf)
    Xf = Xf.astype(dtype)
    w = kwargs.get("sample_weight")
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if fn is fastrbf.lloyd_update:
        labels, K = args[1], int(args[2])
        centers, counts = out
        assert centers.shape == (K, d) and centers.dtype == dtype and counts.shape == (K,)
        for j in range(K):
            members = np.flatnonzero(labels == j)
            sw = sum(Fraction(float(w[i])) for i in members)
            assert abs(Fraction(float(counts[j])) - sw) <= sw * Fraction(1e-12)
            if sw == 0:
                assert np.all(np.isnan(centers[j]))
                continue
            for c in range(d):
                mean = sum(Fraction(float(w[i])) * Fraction(float(Xf[i, c])) for i in members) / sw
                scale = max(abs(Fraction(float(Xf[i, c]))) for i in members)
                eps = 4 * float(np.finfo(dtype).eps)
                assert np.isfinite(centers[j, c])
                assert abs(Fraction(float(centers[j, c])) - mean) <= scale * Fraction(eps) + Fraction(
                    float(np.finfo(dtype).smallest_subnormal))
        return
    res = out
    K = int(args[1])
    assert isinstance(res, fastrbf.KMeansResult)
    assert res.centers.shape == (K, d) and res.centers.dtype == dtype and np.all(np.isfinite(res.centers))
    assert 1 <= res.n_iter <= kwargs["max_iter"] and isinstance(res.converged, bool)
    assert np.bincount(res.labels, minlength=K).min() >= 1
    total = _check_assign(Xf, res.centers, res.labels, None, dtype, w)
    big = Fraction(float(np.finfo(np.float64).max))
    if total > big * Fraction(1.01):
        assert res.inertia == np.inf
    elif total < big * Fraction(0.99):
        assert np.isfinite(res.inertia)
        atol = sum(Fraction(float(v)) for v in w) * 2 * _atol(dtype, _max_abs(Xf, res.centers)) + _atol(np.float64, 1)
        assert abs(Fraction(res.inertia) - total) <= total * Fraction(1e-5 if dtype == np.float32 else 1e-10) + atol
