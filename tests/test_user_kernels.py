"""User-defined kernels (fastrbf.user_kernels): the same bits as the built-in kernel
they re-implement, fused everywhere, refused at definition when they cannot work,
declared properties enforced, pickled by reference, cached across processes."""

import math
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import user_kernel_defs as defs

import fastrbf
from fastrbf import reference
from fastrbf._pairwise import GEMM_MIN_FEATURES
from fastrbf.user_kernels import define_kernel, exp, user_kernel

HERE = os.path.dirname(os.path.abspath(__file__))


def _data(rng, n, d, dtype=np.float64):
    return rng.standard_normal((n, d)).astype(dtype)


# ---------------------------------------------------------------- the same bits as the built-in kernel
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [1, 3, GEMM_MIN_FEATURES[np.dtype(np.float64)] + 3])
def test_user_gaussian_gram_is_bitwise_the_builtin(rng, dtype, d):
    X, Y = _data(rng, 130, d, dtype), _data(rng, 71, d, dtype)
    for kernel in (defs.gauss_user, "gauss_user"):
        assert np.array_equal(fastrbf.gram(X, kernel=kernel, gamma=0.3), fastrbf.gram(X, gamma=0.3))
        assert np.array_equal(fastrbf.gram(X, Y, kernel=kernel, gamma=0.3), fastrbf.gram(X, Y, gamma=0.3))
    g = rng.uniform(0.1, 2.0, Y.shape[0])
    got = fastrbf.gram(X, Y, kernel=defs.gauss_user, gamma=g)
    assert got.dtype == dtype
    assert np.array_equal(got, fastrbf.gram(X, Y, gamma=g))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_user_gaussian_gram_matvec_is_bitwise_the_builtin(rng, dtype):
    X, Y = _data(rng, 90, 4, dtype), _data(rng, 700, 4, dtype)
    V = rng.standard_normal((700, 3)).astype(dtype)
    got = fastrbf.gram_matvec(X, Y, V, kernel=defs.gauss_user, gamma=0.4)
    assert got.dtype == dtype
    assert np.array_equal(got, fastrbf.gram_matvec(X, Y, V, gamma=0.4))


def test_user_dot_product_kernel_matches_the_builtin_polynomial(rng):
    X, Y = _data(rng, 40, 5), _data(rng, 30, 5)
    got = fastrbf.gram(X, Y, kernel=defs.poly2_user, gamma=0.2)
    want = fastrbf.gram(X, Y, kernel="polynomial", gamma=0.2, degree=2, coef0=1.0)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got, (1.0 + 0.2 * X @ Y.T) ** 2, rtol=1e-12)


def test_user_matern52_equals_builtin_and_scikit_learn(rng):
    from sklearn.gaussian_process.kernels import Matern

    X, Y = _data(rng, 60, 3), _data(rng, 45, 3)
    got = fastrbf.gram(X, Y, kernel=defs.matern52_user, gamma=0.25)
    np.testing.assert_allclose(got, fastrbf.gram(X, Y, kernel="matern52", gamma=0.25), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got, Matern(length_scale=2.0, nu=2.5)(X, Y), rtol=1e-12)


def test_user_kernel_gram_matches_numpy_evaluation(rng):
    X = _data(rng, 50, 2)
    got = fastrbf.gram(X, kernel=defs.sine_user, gamma=0.7)
    want = np.cos(np.sqrt(0.7 * reference.sqdist(X, X)))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- fits with a user kernel
def _pair_fits(rng):
    X = rng.uniform(-1, 1, (120, 2))
    Y = np.c_[np.sin(3 * X[:, 0]) + X[:, 1], np.cos(2 * X[:, 1])]
    Xq = rng.uniform(-1, 1, (37, 2))
    return X, Y, Xq


@pytest.mark.parametrize("fit", [
    lambda X, Y, k: fastrbf.kernel_ridge(X, Y, kernel=k, gamma=2.0, alpha=1e-3),
    lambda X, Y, k: fastrbf.kernel_ridge(X, Y, kernel=k, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=40,
                                         seed=0, tol=1e-12, max_iter=500),
    lambda X, Y, k: fastrbf.interpolate(X, Y, kernel=k, gamma=2.0),
    lambda X, Y, k: fastrbf.rbf_network(X, Y, kernel=k, gamma=2.0, n_centers=15, seed=0),
])
def test_fits_with_the_user_gaussian_equal_the_builtin(rng, fit):
    X, Y, Xq = _pair_fits(rng)
    mu = fit(X, Y, defs.gauss_user)
    mb = fit(X, Y, "gaussian")
    np.testing.assert_allclose(mu.predict(Xq), mb.predict(Xq), rtol=1e-12, atol=1e-12)
    assert mu.kernel.code == defs.gauss_user.code


def test_nystroem_and_sklearn_with_a_user_kernel(rng):
    from fastrbf.sklearn import KernelRidge

    X, Y, Xq = _pair_fits(rng)
    a = fastrbf.nystroem(X, 30, kernel=defs.gauss_user, gamma=1.5, seed=0).transform(Xq)
    b = fastrbf.nystroem(X, 30, kernel="gaussian", gamma=1.5, seed=0).transform(Xq)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    ku = KernelRidge(kernel=defs.gauss_user, gamma=1.5, alpha=1e-2).fit(X, Y[:, 0])
    kb = KernelRidge(kernel="rbf", gamma=1.5, alpha=1e-2).fit(X, Y[:, 0])
    np.testing.assert_allclose(ku.predict(Xq), kb.predict(Xq), rtol=1e-12, atol=1e-12)


def test_dask_gram_with_a_user_kernel(rng):
    import dask.array as da

    import fastrbf.dask as fd

    X = _data(rng, 200, 3)
    got = fd.gram(da.from_array(X, chunks=64), kernel=defs.gauss_user, gamma=0.5).compute(scheduler="synchronous")
    assert np.array_equal(got, fastrbf.gram(X, gamma=0.5))


def test_interpolate_with_an_undeclared_kernel_solves_by_lu(rng):
    X = np.linspace(0, 3, 13)[:, None]
    y = np.sin(X[:, 0])
    m = fastrbf.interpolate(X, y, kernel=defs.mq_user, gamma=20.0, degree=-1)
    np.testing.assert_allclose(m.predict(X), y, atol=1e-10)
    K = np.sqrt(1.0 + 20.0 * reference.sqdist(X, X))
    np.testing.assert_allclose(m.weights[:, 0], np.linalg.solve(K, y), rtol=1e-8)


# ---------------------------------------------------------------- declared properties
@pytest.mark.parametrize("solver", ["cholesky", "nystrom-pcg"])
def test_kernel_ridge_refuses_a_kernel_not_declared_positive_definite(rng, solver):
    X = rng.standard_normal((30, 2))
    with pytest.raises(ValueError, match=r"needs a positive definite kernel; the user kernel 'sine_user' is not "
                                         r"declared positive definite\. Declare it with"):
        fastrbf.kernel_ridge(X, X[:, 0], kernel=defs.sine_user, gamma=1.0, alpha=0.1, solver=solver)


def test_a_kernel_positive_definite_up_to_a_dimension():
    k = define_kernel(lambda s: exp(-s), name="gauss_2d_only", positive_definite=2)
    assert k.max_dim == 2
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="declared positive definite for up to 2 features, and the data have 3"):
        fastrbf.kernel_ridge(X, X[:, 0], kernel=k, gamma=1.0, alpha=0.1)
    fastrbf.kernel_ridge(X[:, :2], X[:, 0], kernel=k, gamma=1.0, alpha=0.1)


# ---------------------------------------------------------------- refused at definition
def test_refuses_a_function_numba_cannot_compile():
    import fractions

    def not_numba(s):
        return float(fractions.Fraction(s))

    with pytest.raises(TypeError, match=r"The kernel function `.*not_numba` of user kernel 'not_numba' cannot be "
                                        r"compiled by numba for a float64 argument: "):
        define_kernel(not_numba)
    assert user_kernel("not_numba") is None


def test_refuses_a_function_that_does_not_return_a_real_number():
    def pair(s):
        return (s, s)

    with pytest.raises(TypeError, match="must return a real number; it returns"):
        define_kernel(pair)


@pytest.mark.parametrize("body, where", [(lambda s: 1.0 / s, "0.0"), (lambda s: math.exp(s), "10000.0"),
                                         (lambda s: math.log(s), "0.0")])
def test_refuses_a_function_not_finite_on_the_probe(body, where):
    with pytest.raises(ValueError, match=rf"user kernel 'bad_kernel' returns .* at {where}: a kernel must be finite"):
        define_kernel(body, name="bad_kernel")


def test_refuses_a_bad_derivative_and_bad_arguments():
    with pytest.raises(ValueError, match=r"The derivative `.*` of user kernel 'dk' returns inf"):
        define_kernel(lambda s: exp(-s), name="dk", derivative=lambda s: math.exp(s * s))
    with pytest.raises(ValueError, match="`name` must not be a built-in kernel's name; got 'gaussian'."):
        define_kernel(lambda s: exp(-s), name="gaussian")
    with pytest.raises(ValueError, match=r"`name` must be an identifier; got '2 words'."):
        define_kernel(lambda s: exp(-s), name="2 words")
    with pytest.raises(TypeError, match="must be a Python function"):
        define_kernel(np.exp, name="npexp")
    with pytest.raises(TypeError, match="`radial` must be"):
        define_kernel(lambda s: exp(-s), name="r", radial=1)
    with pytest.raises(ValueError, match="`support` is only for radial kernels"):
        define_kernel(lambda t: t, name="dotk", radial=False, support=1.0)


def test_unknown_names_are_still_refused_by_name():
    with pytest.raises(ValueError, match=r"`kernel` must be one of \[.*\]; got 'no_such_kernel'."):
        fastrbf.gram(np.zeros((2, 1)), kernel="no_such_kernel")


# ---------------------------------------------------------------- identity, derivative
def test_code_token_follows_the_function():
    k1 = define_kernel(lambda s: 1.0 / (1.0 + s), name="tok", positive_definite=True)
    k2 = define_kernel(lambda s: 1.0 / (1.0 + s), name="tok", positive_definite=True)
    k3 = define_kernel(lambda s: 1.0 / (1.0 + 2.0 * s), name="tok", positive_definite=True)
    assert k1.code == k2.code != k3.code
    assert user_kernel("tok") is k3  # a new definition replaces the old one
    X = np.array([[0.0], [1.0]])
    assert fastrbf.gram(X, kernel=k1)[0, 1] == 0.5
    assert fastrbf.gram(X, kernel=k3)[0, 1] == 1.0 / 3.0


def test_a_lambda_is_named_after_its_code_the_same_in_every_process():
    def cauchy(c):
        return define_kernel(lambda s: 1.0 / (1.0 + c * s), positive_definite=True)

    k1, k1b, k2 = cauchy(1.0), cauchy(1.0), cauchy(2.0)
    assert k1.name.startswith("lambda_") and k1.name.isidentifier()
    assert k1.name == k1b.name != k2.name  # the captured value is part of the code
    assert user_kernel(k1.name) is k1b
    X = np.array([[0.0], [1.0]])
    assert fastrbf.gram(X, kernel=k1)[0, 1] == 0.5
    assert fastrbf.gram(X, kernel=k2.name)[0, 1] == 1.0 / 3.0
    src = "from fastrbf.user_kernels import define_kernel\nprint(define_kernel(lambda s: 1.0 / (1.0 + s)).name)"
    names = {subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, check=True).stdout.strip()
             for _ in range(2)}
    assert names == {define_kernel(lambda s: 1.0 / (1.0 + s)).name}


def test_numeric_derivative_is_close_to_the_analytic_one():
    k = define_kernel(lambda s: 1.0 / (1.0 + s), name="cauchy_nd", positive_definite=True)
    d = k.jitted_derivative
    for s in (0.0, 1e-4, 0.3, 1.0, 7.0, 300.0):
        assert d(s) == pytest.approx(-1.0 / (1.0 + s) ** 2, rel=1e-6)
    assert defs.gauss_user.jitted_derivative(0.5) == -math.exp(-0.5) or \
        defs.gauss_user.jitted_derivative(0.5) == pytest.approx(-math.exp(-0.5), rel=1e-15)


# ---------------------------------------------------------------- pickling by reference, cache across processes
def _run(code, env=None):
    full = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]), FASTRBF_QUIET="1")
    full.update(env or {})
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


def test_model_pickles_by_reference_into_a_new_process(rng, tmp_path):
    X, Y, Xq = _pair_fits(rng)
    m = fastrbf.kernel_ridge(X, Y, kernel="gauss_user", gamma=2.0, alpha=1e-3)  # by name: stores the object
    assert m.kernel.code == defs.gauss_user.code
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(m))
    np.save(tmp_path / "q.npy", Xq)
    out = _run(f"""
        import pickle, numpy as np
        m = pickle.loads(open({str(path)!r}, "rb").read())
        np.save({str(tmp_path / "p.npy")!r}, m.predict(np.load({str(tmp_path / "q.npy")!r})))
        print(type(m.kernel).__name__, m.kernel.name)
    """)
    assert out.split() == ["UserKernel", "gauss_user"]
    assert np.array_equal(np.load(tmp_path / "p.npy"), m.predict(Xq))


def test_a_kernel_not_importable_refuses_to_pickle(rng):
    local = define_kernel(lambda s: exp(-s), name="local_kernel", positive_definite=True)
    m = fastrbf.kernel_ridge(rng.standard_normal((10, 2)), np.arange(10.0), kernel=local, gamma=1.0, alpha=0.1)
    with pytest.raises(pickle.PicklingError, match=r"The user kernel 'local_kernel' cannot be pickled: it is pickled by "
                                                   r"reference, as `\S*test_user_kernels.local_kernel`, which does not "
                                                   r"name it\."):
        pickle.dumps(m)


def test_compiled_once_and_cached_across_processes(tmp_path):
    code = """
        import numpy as np, fastrbf, user_kernel_defs as defs
        from fastrbf._jit import pairwise
        X = np.random.default_rng(0).random((40, 3))
        fastrbf.gram(X, kernel=defs.matern52_user, gamma=0.5)
        st = pairwise.pairwise_upper.kernel.stats
        print(sum(st.cache_hits.values()), sum(st.cache_misses.values()))
    """
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    first = _run(code, env).split()
    second = _run(code, env).split()
    assert first == ["0", "1"]  # compiled, then saved
    assert second == ["1", "0"]  # loaded from the disk cache, not compiled


# ---------------------------------------------------------------- gradients
def test_gradients_with_a_user_kernel_and_its_derivative(rng):
    X, Y, Xq = _pair_fits(rng)
    mu = fastrbf.kernel_ridge(X, Y, kernel=defs.gauss_user, gamma=2.0, alpha=1e-3)
    mb = fastrbf.kernel_ridge(X, Y, kernel="gaussian", gamma=2.0, alpha=1e-3)
    vu, gu = mu.predict(Xq, return_grad=True)
    vb, gb = mb.predict(Xq, return_grad=True)
    assert gu.shape == (Xq.shape[0], 2, 2)
    np.testing.assert_allclose(vu, vb, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gu, gb, rtol=1e-12, atol=1e-12)


def test_gradients_with_the_numeric_derivative(rng):
    X, Y, Xq = _pair_fits(rng)
    mu = fastrbf.interpolate(X, Y[:, 0], kernel=defs.matern52_user, gamma=3.0, degree=0)
    mb = fastrbf.interpolate(X, Y[:, 0], kernel="matern52", gamma=3.0, degree=0)
    _, gu = mu.predict(Xq, return_grad=True)
    _, gb = mb.predict(Xq, return_grad=True)
    np.testing.assert_allclose(gu, gb, rtol=1e-6, atol=1e-6 * np.abs(gb).max())


def test_a_kernel_defined_again_by_a_reloaded_module_still_pickles(rng):
    import importlib

    old = defs.gauss_user
    again = importlib.reload(defs)
    assert again.gauss_user is not old and again.gauss_user.code == old.code
    m = fastrbf.kernel_ridge(rng.standard_normal((10, 2)), np.arange(10.0), kernel=old, gamma=1.0, alpha=0.1)
    assert np.array_equal(pickle.loads(pickle.dumps(m)).predict(np.zeros((1, 2))), m.predict(np.zeros((1, 2))))


def test_a_kernel_not_finite_away_from_the_probe_is_named_with_its_argument():
    # finite on the probe points (s <= 1e4), NaN beyond: the error names the kernel and s,
    # never an overflow of the data
    k = define_kernel(lambda s: 1.0 / (1.0 + s) if s < 1e5 else math.nan, name="nan_far", positive_definite=True)
    X = np.array([[0.0], [1.0], [1000.0]])
    y = np.array([0.0, 1.0, 2.0])
    match = r"The user kernel 'nan_far' returns nan at s = 1e\+06 \(entry \[0, 2\] of the kernel matrix\)"
    with pytest.raises(ValueError, match=match):
        fastrbf.gram(X, kernel=k)
    with pytest.raises(ValueError, match=match):
        fastrbf.kernel_ridge(X, y, kernel=k, gamma=1.0, alpha=0.1)
    with pytest.raises(ValueError, match=match):
        fastrbf.interpolate(X, y, kernel=k, gamma=1.0)
    m = fastrbf.kernel_ridge(X[:2], y[:2], kernel=k, gamma=1.0, alpha=0.1)
    with pytest.raises(ValueError, match=r"'nan_far' returns nan at s = 1e\+06 \(entry \[1, 0\]"):
        m.predict(np.array([[0.5], [1000.0]]))
