"""The scalar checkers of ``fastrbf._validation`` (one per rule: an int in a range, a
finite real number in a range, a bool, one of a set of choices, a float dtype) and the
public parameters they check: the rule, the exception (``TypeError`` for a wrong type,
``ValueError`` for a value out of range) and the message form
`` `name` must be <rule>; got <value!r>. ``."""

import re
from fractions import Fraction

import numpy as np
import pytest
from helpers import DEPRECATED_GP

import fastrbf
import fastrbf.sklearn as fsk
from fastrbf import _threads
from fastrbf import _validation as _v

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests


def msg(name, rule, value):
    """The exact message, as a regex anchored at both ends."""
    return "^" + re.escape(f"`{name}` must be {rule}; got {value!r}.") + "$"


# ---------------------------------------------------------------- is_int / is_real
@pytest.mark.parametrize("value", [0, -3, 2**70, np.int8(1), np.uint64(5), np.int64(-1)])
def test_is_int_accepts_python_and_numpy_ints(value):
    assert _v.is_int(value)


@pytest.mark.parametrize("value", [True, False, np.True_, 1.0, np.float64(1.0), "1", None, np.array(1), [1]])
def test_is_int_refuses_bools_floats_and_arrays(value):
    assert not _v.is_int(value)


@pytest.mark.parametrize("value", [0, 1.5, -2, np.float32(0.5), np.int64(3), np.array(2.0), np.array(3),
                                   np.array(1.0, dtype=np.float32), Fraction(1, 3), float("nan"), np.inf])
def test_is_real_accepts_real_scalars(value):
    assert _v.is_real(value)


@pytest.mark.parametrize("value", [True, np.False_, np.array(True), "1", None, 1j, np.complex128(1), [1.0],
                                   np.ones(1), np.array("a"), np.array(1.0, dtype=object)])
def test_is_real_refuses_bools_strings_complex_and_arrays(value):
    assert not _v.is_real(value)


# ---------------------------------------------------------------- check_int
@pytest.mark.parametrize("value", [5, np.int64(5), np.int32(5), np.uint8(5)])
def test_check_int_returns_a_python_int(value):
    out = _v.check_int(value, "k", 1, 10)
    assert out == 5 and type(out) is int


@pytest.mark.parametrize(("low", "high", "value", "rule"), [
    (None, None, 1.5, "an int"),
    (1, None, 0, "an int >= 1"),
    (0, None, -1, "an int >= 0"),
    (None, 7, 8, "an int <= 7"),
    (1, 1000, 10000, "an int in [1, 1000]"),
    (1, 1000, 0, "an int in [1, 1000]"),
])
def test_check_int_rule_from_the_bounds(low, high, value, rule):
    exc = TypeError if isinstance(value, float) else ValueError
    with pytest.raises(exc, match=msg("n", rule, value)):
        _v.check_int(value, "n", low, high)


def test_check_int_bounds_are_inclusive():
    assert _v.check_int(1, "k", 1, 3) == 1
    assert _v.check_int(3, "k", 1, 3) == 3
    assert _v.check_int(-(2**70), "k") == -(2**70)


@pytest.mark.parametrize("value", [True, False, np.True_, 2.0, np.float64(2.0), "2", None, np.array(2), [2], 2 + 0j])
def test_check_int_wrong_type_is_a_type_error(value):
    with pytest.raises(TypeError, match=msg("k", "an int >= 1", value)):
        _v.check_int(value, "k", 1)


def test_check_int_text_and_type_error():
    rule = "an int in [1, n_samples] = [1, 40]"
    with pytest.raises(ValueError, match=msg("k", rule, 41)):
        _v.check_int(41, "k", 1, 40, text=rule)
    with pytest.raises(TypeError, match=msg("k", rule, "3")):
        _v.check_int("3", "k", 1, 40, text=rule)
    with pytest.raises(ValueError, match=msg("n_components", "an int >= 1", 2.5)):
        _v.check_int(2.5, "n_components", 1, type_error=ValueError)


# ---------------------------------------------------------------- check_real
@pytest.mark.parametrize("value", [2, 2.0, np.float32(2.0), np.float64(2.0), np.int64(2), np.uint8(2), np.array(2.0),
                                   np.array(2), np.array(2.0, dtype=np.float32), Fraction(4, 2)])
def test_check_real_accepts_numpy_scalars_and_0d_arrays(value):
    out = _v.check_real(value, "gamma", low=0, strict=True)
    assert out == 2.0 and type(out) is float


@pytest.mark.parametrize(("kwargs", "value", "rule"), [
    ({}, np.nan, "a finite number"),
    ({"low": 0, "strict": True}, 0, "a finite number > 0"),
    ({"low": 0, "strict": True}, -1.0, "a finite number > 0"),
    ({"low": 0}, -0.5, "a finite number >= 0"),
    ({"low": 0.5}, 0.25, "a finite number >= 0.5"),
    ({"high": 1}, 1.5, "a finite number <= 1"),
    ({"low": 0, "high": 1}, 2.0, "a finite number in [0, 1]"),
    ({"low": 0, "high": 1, "strict": True}, 0.0, "a finite number in (0, 1]"),
    ({"low": 1e-5}, 0.0, "a finite number >= 1e-05"),
])
def test_check_real_rule_from_the_bounds(kwargs, value, rule):
    with pytest.raises(ValueError, match=msg("x", rule, value)):
        _v.check_real(value, "x", **kwargs)


def test_check_real_bounds():
    assert _v.check_real(0, "alpha", low=0) == 0.0  # >= 0 takes 0
    assert _v.check_real(1, "x", low=0, high=1) == 1.0  # high is inclusive
    assert _v.check_real(-1e300, "coef0") == -1e300  # no bound: any finite number


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, np.float32(np.inf), np.array(np.nan), 10**400, -(10**400)])
def test_check_real_refuses_nan_inf_and_huge_ints(value):
    with pytest.raises(ValueError, match=msg("coef0", "a finite number", value)):
        _v.check_real(value, "coef0")


@pytest.mark.parametrize("value", [True, np.True_, np.array(False), "1", None, 1j, [1.0], np.ones(1), np.ones((1, 1))])
def test_check_real_wrong_type_is_a_type_error(value):
    with pytest.raises(TypeError, match=msg("tol", "a finite number >= 0", value)):
        _v.check_real(value, "tol", low=0)


def test_check_real_text_and_type_error():
    with pytest.raises(ValueError, match=msg("gamma", "a finite number > 0 (or None)", -1.0)):
        _v.check_real(-1.0, "gamma", low=0, strict=True, text="a finite number > 0 (or None)")
    with pytest.raises(ValueError, match=msg("gamma", "a finite number > 0", "1")):
        _v.check_real("1", "gamma", low=0, strict=True, type_error=ValueError)


# ---------------------------------------------------------------- check_bool
@pytest.mark.parametrize(("value", "expected"), [(True, True), (False, False), (np.True_, True), (np.False_, False)])
def test_check_bool_accepts_bools(value, expected):
    out = _v.check_bool(value, "classify")
    assert out is expected


@pytest.mark.parametrize("value", [1, 0, "yes", None, 1.0, np.array(True), np.array([True]), np.int64(1)])
def test_check_bool_refuses_truthy_values(value):
    with pytest.raises(TypeError, match=msg("fit_intercept", "a bool (True or False)", value)):
        _v.check_bool(value, "fit_intercept")
    with pytest.raises(TypeError, match=msg("grad", "True or False", value)):
        _v.check_bool(value, "grad", text="True or False")


# ---------------------------------------------------------------- check_choice
def test_check_choice_returns_the_choice():
    assert _v.check_choice("cos", "kind", ("cos", "cos_sin")) == "cos"
    out = _v.check_choice(np.str_("random"), "method", ("kmeans", "random"))
    assert out == "random" and type(out) is str
    assert _v.check_choice(None, "optimizer", ("fmin_l_bfgs_b", None)) is None


@pytest.mark.parametrize("value", ["sin", "COS", "", None, ["cos"], 1, np.array("cos"), ("cos",)])
def test_check_choice_anything_else_is_a_value_error(value):
    with pytest.raises(ValueError, match=msg("kind", "one of ['cos', 'cos_sin']", value)):
        _v.check_choice(value, "kind", ("cos", "cos_sin"))


def test_check_choice_text():
    with pytest.raises(ValueError, match=msg("weights", '"uniform" or "distance"', "none")):
        _v.check_choice("none", "weights", ("uniform", "distance"), text='"uniform" or "distance"')
    with pytest.raises(ValueError, match=msg("optimizer", "'fmin_l_bfgs_b' or None", "adam")):
        _v.check_choice("adam", "optimizer", ("fmin_l_bfgs_b", None), text="'fmin_l_bfgs_b' or None")


# ---------------------------------------------------------------- check_float_dtype
@pytest.mark.parametrize(("value", "expected"), [(None, np.float64), (np.float32, np.float32), ("float64", np.float64),
                                                 (np.dtype(np.float32), np.float32), ("f4", np.float32)])
def test_check_float_dtype(value, expected):
    assert _v.check_float_dtype(value) == np.dtype(expected)


def test_check_float_dtype_errors():
    with pytest.raises(TypeError, match=r"^`dtype` must be float32 or float64; got 'x', which is not a dtype\.$"):
        _v.check_float_dtype("x")
    for value in (np.int64, "complex128", ">f4", np.float16):
        with pytest.raises(ValueError, match=msg("dtype", "float64 or float32", value)):
            _v.check_float_dtype(value, text="float64 or float32")


# ---------------------------------------------------------------- result_dtype
def test_result_dtype_takes_arrays_and_dtypes():
    f32, f64 = np.zeros(1, np.float32), np.zeros(1)
    assert _v.result_dtype(f32, np.dtype(np.float32)) == np.float32
    assert _v.result_dtype(f32, np.zeros(1, ">f4"), None) == np.float32  # either byte order
    assert _v.result_dtype(np.dtype(np.float32), f64) == np.float64
    assert _v.result_dtype(f32, np.zeros(1, np.int32)) == np.float64
    assert _v.result_dtype(np.zeros(1, np.float16)) == np.float64


# ---------------------------------------------------------------- the public parameters
def test_wrong_types_are_type_errors_at_the_sites():
    """Parameters whose wrong type was a ValueError and is now a TypeError."""
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(TypeError, match=msg("n_features", "an int >= 1", 2.5)):
        fastrbf.random_fourier(2.5, 4, gamma=1.0)
    with pytest.raises(TypeError, match=msg("gamma", "a finite number > 0", "1")):
        fastrbf.nystroem(X, 3, gamma="1")
    with pytest.raises(TypeError, match=msg("alpha", "a finite number >= 0", True)):
        fastrbf.nystroem(X, 3, gamma=1.0, alpha=True)
    with pytest.raises(TypeError, match=msg("max_iter", "an int >= 1", 1.5)):
        fastrbf.nystroem(X, 3, gamma=1.0, max_iter=1.5)
    with pytest.raises(TypeError, match=msg("n_components", "an int >= 1", 2.5)):
        fsk.Nystroem(n_components=2.5).fit(X)


def test_random_fourier_keeps_value_errors_for_wrong_types():
    with pytest.raises(ValueError, match=msg("n_components", "an int >= 1", "4")):
        fastrbf.random_fourier(2, "4", gamma=1.0)
    with pytest.raises(ValueError, match=msg("gamma", "a finite number > 0", None)):
        fastrbf.random_fourier(2, 4, gamma=None)


def test_cholesky_dtype_that_is_not_a_dtype():
    with pytest.raises(TypeError, match=r"^`dtype` must be float64 or float32; got 'nonsense', which is not a dtype\.$"):
        fastrbf.cholesky(np.eye(2), dtype="nonsense")


def test_n_threads_rule():
    with pytest.raises(TypeError, match=msg("n_threads", "an int or None", 1.5)):
        _threads.resolve(1.5)
    with pytest.raises(TypeError, match=msg("n_threads", "an int or None", np.True_)):
        _threads.resolve(np.True_)
    assert _threads.resolve(np.int64(1)) == 1


def test_real_parameters_take_numpy_scalars_and_0d_arrays():
    X = np.random.default_rng(0).standard_normal((12, 2))
    y = X[:, 0] ** 2
    K = fastrbf.gram(X, kernel="polynomial", gamma=0.5, degree=np.int64(2), coef0=np.array(1.0))
    np.testing.assert_array_equal(K, fastrbf.gram(X, kernel="polynomial", gamma=0.5, degree=2, coef0=1.0))
    a = fastrbf.nystroem(X, 4, gamma=np.float32(0.5), alpha=np.array(1e-3), seed=0)
    b = fastrbf.nystroem(X, 4, gamma=0.5, alpha=1e-3, seed=0)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    g1 = fastrbf.gp_regression(X, y, kernel="gaussian", theta0=[1.0, 1.0], noise=np.array(0.1), optimize=False)
    g2 = fastrbf.gp_regression(X, y, kernel="gaussian", theta0=[1.0, 1.0], noise=0.1, optimize=False)
    np.testing.assert_array_equal(g1.predict(X), g2.predict(X))
    v1 = fastrbf.nadaraya_watson(X, y, X[:3], gamma=np.array(2.0))
    np.testing.assert_array_equal(v1, fastrbf.nadaraya_watson(X, y, X[:3], gamma=2.0))


def test_byte_swapped_float32_gives_float32(rng):
    """float32 of either byte order is float32: the results are float32 when every input is."""
    X = rng.standard_normal((12, 2)).astype(np.float32)
    Xs = X.astype(">f4")
    y = X[:, 0] ** 2
    ny = fastrbf.nystroem(Xs, 4, gamma=0.5, seed=0)
    assert ny.dtype == np.float32 and ny.transform(Xs).dtype == np.float32
    np.testing.assert_array_equal(ny.transform(Xs), fastrbf.nystroem(X, 4, gamma=0.5, seed=0).transform(X))
    rff = fastrbf.random_fourier(2, 4, gamma=0.5, seed=0, dtype=np.float32)
    assert rff.transform(Xs).dtype == np.float32
    for out in (fastrbf.knn_predict(Xs, y.astype(">f4"), Xs[:3], 2),
                fastrbf.nadaraya_watson(Xs, y.astype(">f4"), Xs[:3], gamma=1.0),
                fastrbf.rbf_vote(Xs, y.astype(">f4"), Xs[:3], gamma=1.0)):
        assert out.dtype == np.float32
    gp = fastrbf.gp_regression(X, y, kernel="gaussian", theta0=[1.0, 1.0], noise=0.1, optimize=False)
    assert gp.predict(Xs).dtype == np.float32


# ---------------------------------------------------------------- models, dask, k-means
def test_dask_kmeans_wrong_types_are_type_errors():
    """`init_rounds` and `oversampling_factor` of a wrong type: TypeError (a ValueError before)."""
    import dask.array as da

    from fastrbf import dask as fd
    Xd = da.from_array(np.random.default_rng(0).standard_normal((40, 2)), chunks=(20, 2))
    with pytest.raises(TypeError, match=msg("init_rounds", "an int >= 1", 1.5)):
        fd.kmeans(Xd, 2, init_rounds=1.5)
    with pytest.raises(TypeError, match=msg("init_rounds", "an int >= 1", True)):
        fd.kmeans(Xd, 2, init_rounds=True)
    with pytest.raises(ValueError, match=msg("init_rounds", "an int >= 1", 0)):
        fd.kmeans(Xd, 2, init_rounds=0)
    with pytest.raises(TypeError, match=msg("oversampling_factor", "a finite number > 0", "2")):
        fd.kmeans(Xd, 2, oversampling_factor="2")
    with pytest.raises(ValueError, match=msg("oversampling_factor", "a finite number > 0", float("inf"))):
        fd.kmeans(Xd, 2, oversampling_factor=float("inf"))
    with pytest.raises(TypeError, match=msg("n_threads", "a nonzero int or None", 1.5)):
        fd.kmeans(Xd, 2, n_threads=1.5)
    with pytest.raises(ValueError, match=msg("n_threads", "a nonzero int or None", 0)):
        fd.kmeans(Xd, 2, n_threads=0)
    with pytest.raises(ValueError, match=msg(
            "solver", '"nystrom-pcg" on dask arrays (the n x n Cholesky solve does not scale out)', None)):
        fd.kernel_ridge(Xd, np.ones(40), gamma=1.0, alpha=1.0, solver=None)


def test_sample_weight_rule_is_the_same_in_memory_and_on_dask():
    """One rule and one message (the global row index) for both backends."""
    import dask
    import dask.array as da

    from fastrbf import dask as fd
    X = np.random.default_rng(0).standard_normal((60, 2))
    for w, text in ((np.r_[np.ones(40), np.nan, np.ones(19)], "contain only finite values; got nan at index 40."),
                    (np.r_[np.ones(40), -2.0, np.ones(19)], "be >= 0; got -2.0."),
                    (np.zeros(60), "have at least one value > 0; got all zeros.")):
        pattern = "^" + re.escape(f"`sample_weight` must {text}") + "$"
        with pytest.raises(ValueError, match=pattern):
            fastrbf.kmeans(X, 2, seed=0, sample_weight=w)
        with pytest.raises(ValueError, match=pattern):
            fastrbf.lloyd_update(X, np.zeros(60, dtype=np.int64), 1, sample_weight=w)
        with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match=pattern):
            fd.kmeans(da.from_array(X, chunks=(30, 2)), 2, seed=0, sample_weight=da.from_array(w, chunks=30))
    with pytest.raises(ValueError, match=r"^`sample_weight` must have one value per row of `X` \(60\); got shape"):
        fd.kmeans(da.from_array(X, chunks=(30, 2)), 2, sample_weight=np.ones(59))


def test_kmeans_scalars_take_numpy_scalars_and_0d_arrays():
    X = np.random.default_rng(0).standard_normal((50, 2))
    a = fastrbf.kmeans(X, np.int64(3), seed=0, tol=np.array(1e-4), max_iter=np.int32(50), n_init=np.int64(2))
    b = fastrbf.kmeans(X, 3, seed=0, tol=1e-4, max_iter=50, n_init=2)
    np.testing.assert_array_equal(a.centers, b.centers)
    with pytest.raises(ValueError, match=msg("n_clusters", "in [1, n_samples] = [1, 50]", 51)):
        fastrbf.kmeans(X, np.int64(51))
    with pytest.raises(TypeError, match=msg("tol", "a finite number >= 0", np.array([1e-4]))):
        fastrbf.kmeans(X, 3, tol=np.array([1e-4]))
    with pytest.raises(ValueError, match=msg("init", "'k-means++', 'random' or an array of shape (3, 2)", "kmeans")):
        fastrbf.kmeans(X, 3, init="kmeans")


def test_model_scalar_rules():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = X[:, 0]
    with pytest.raises(TypeError, match=msg("gamma", "a finite number > 0", "abc")):
        fastrbf.kernel_ridge(X, y, gamma="abc", alpha=1.0)
    with pytest.raises(TypeError, match=msg("gamma", "a finite number > 0", True)):
        fastrbf.kernel_ridge(X, y, gamma=True, alpha=1.0)
    with pytest.raises(ValueError, match=msg("solver", "one of ('auto', 'cholesky', 'nystrom', 'nystrom-pcg')", "lu")):
        fastrbf.kernel_ridge(X, y, gamma=1.0, alpha=1.0, solver="lu")
    pcg = {"gamma": 1.0, "alpha": 1.0, "solver": "nystrom-pcg"}
    with pytest.raises(ValueError, match=msg("tol", "a finite number > 0", "1e-6")):  # ValueError: as released
        fastrbf.kernel_ridge(X, y, tol="1e-6", **pcg)
    with pytest.raises(ValueError, match=msg("max_iter", "an int >= 1", 2.5)):
        fastrbf.kernel_ridge(X, y, max_iter=2.5, **pcg)
    with pytest.raises(ValueError, match=msg("n_landmarks", "an int in [1, n_samples] = [1, 20]", 2.5)):
        fastrbf.kernel_ridge(X, y, n_landmarks=2.5, **pcg)
    with pytest.raises(ValueError, match=msg("landmarks", '"uniform", "kmeans", "rpcholesky", "auto" or an array', "random")):
        fastrbf.kernel_ridge(X, y, landmarks="random", **pcg)
    with pytest.raises(ValueError, match=msg("degree", "an int >= -1", 1.0)):
        fastrbf.interpolate(X, y, degree=1.0)
    with pytest.raises(ValueError, match=msg("n_centers", "an int in [1, n_samples] = [1, 20]", 2.5)):
        fastrbf.rbf_network(X, y, n_centers=2.5, gamma=1.0)
    with pytest.raises(TypeError, match=re.escape("`n_centers` must be None or an int; got 2.0.")):
        fastrbf.rbf_network(X, y, centers=X[:2], n_centers=2.0, gamma=1.0)
    with pytest.raises(ValueError, match=msg("centers", '"kmeans", "all" or an array', "none")):
        fastrbf.rbf_network(X, y, centers="none", gamma=1.0)
    with pytest.raises(TypeError, match=msg("bias", "a bool", 1)):
        fastrbf.rbf_network(X, y, n_centers=3, gamma=1.0, bias=1)
    with pytest.raises(TypeError, match=msg("max_gamma_iter", "an int >= 0", np.True_)):
        fastrbf.rbf_network(X, y, n_centers=3, gamma=1.0, max_gamma_iter=np.True_)


def test_float32_predictions_for_byte_swapped_float32_queries():
    """The prediction dtype follows the float32 rule of every function: float32 of either byte order."""
    X = np.random.default_rng(0).standard_normal((20, 2)).astype(np.float32)
    m = fastrbf.kernel_ridge(X, X[:, 0], gamma=1.0, alpha=1.0)
    assert m.dtype == np.float32
    got = m.predict(X.astype(">f4"))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, m.predict(X))
    assert m.predict(X.astype(np.float64)).dtype == np.float64
