"""Gradients of the predictions (``return_grad=True``): against finite differences for
every kernel and model, the values returned with them against the plain call, shapes,
dtypes, thread-count independence, the coincident-point convention and the messages.

The reference is a fourth-order central difference of the plain prediction in float64,
``(8 (f(x + h) - f(x - h)) - (f(x + 2h) - f(x - 2h))) / (12 h)`` with ``h = 1e-3`` on data
in the unit cube (truncation ~ h^4, rounding ~ eps / h: both far below the 1e-6 asked).
The error is measured against the largest reference entry of each output (relative error
of the Jacobian, not of its tiny entries).  Query points stay away from the centres (and
``gamma`` keeps every point inside the support of the compact kernels), where the kernels
with a cusp are smooth.
"""

import helpers
import numpy as np
import pytest
from helpers import DEPRECATED_GP

from fastrbf import (
    KERNELS,
    KernelModel,
    gp_regression,
    gram,
    interpolate,
    kernel_ridge,
    nadaraya_watson,
    rbf_network,
)
from fastrbf.models import PCG_KERNELS

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests

RTOL = 1e-6
H = 1e-3
RADIAL = [name for name, k in KERNELS.items() if k.radial]
#: kernels whose gradient has a cusp or singularity at a centre
CUSP = ["laplacian", "matern12", "linear", "truncated", "thin_plate_spline"]


def gamma_for(kernel):
    """A width that keeps the unit cube inside the support of the compact kernels and the
    systems well conditioned."""
    k = KERNELS[kernel]
    if k.support is not None:
        return 0.2
    if not k.radial:
        return 0.5
    return 1.0 if k.scale_invariant else 3.0


def central_diff(f, X):
    """:func:`helpers.central_diff` with this file's step ``H``."""
    return helpers.central_diff(f, X, H)


def assert_grad(grad, ref, rtol=RTOL):
    """Each output's Jacobian within ``rtol`` of the largest entry of its reference."""
    assert grad.shape == ref.shape
    g = grad.reshape(grad.shape[0], -1, grad.shape[-1])
    r = ref.reshape(ref.shape[0], -1, ref.shape[-1])
    for q in range(r.shape[1]):
        scale = np.abs(r[:, q]).max()
        assert scale > 0
        err = np.abs(g[:, q] - r[:, q]).max() / scale
        assert err <= rtol, f"output {q}: relative error {err:.2e}"


def queries(rng, centers, m=23):
    """Query points in the unit cube at least 0.02 from every centre."""
    out = []
    while len(out) < m:
        x = rng.random(centers.shape[1])
        if np.min(np.linalg.norm(centers - x, axis=1)) > 0.02:
            out.append(x)
    return np.array(out)


def check_model(predict, Xq, plain=None, rtol=RTOL):
    """predict(Xq, return_grad=True) against central differences of the plain call."""
    plain = plain or (lambda Z: predict(Z))
    values, grad = predict(Xq, return_grad=True)
    assert_grad(grad, central_diff(plain, Xq), rtol)
    return values, grad


# ---------------------------------------------------------------- the fused kernel itself
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("k", [1, 2])
def test_every_kernel_matches_finite_differences_over_column_chunks(rng, kernel, k):
    # 1100 centres: three column chunks of the fused pass; 37 queries: a partial row block
    C = rng.random((1100, 3))
    W = rng.standard_normal((1100, k)) / 1100
    model = KernelModel.without_tail(C, W, kernel=kernel, gamma=gamma_for(kernel), degree=3, coef0=1.0,
                                     intercept=np.full(k, 0.5), dtype=np.dtype(np.float64), single_output=k == 1)
    Xq = queries(rng, C, 37) if kernel in CUSP else rng.random((37, 3))
    values, grad = check_model(model.predict, Xq)
    assert grad.shape == ((37, 3) if k == 1 else (37, 2, 3))
    # the values agree with the plain call to rounding: a few ulp of sum_j |w_j k(x, x_j)|
    K = gram(Xq, C, kernel=kernel, gamma=gamma_for(kernel), degree=3, coef0=1.0)
    bound = 8 * np.finfo(np.float64).eps * (np.abs(K) @ np.abs(W) + 0.5)
    plain = model.predict(Xq).reshape(37, k)
    assert np.all(np.abs(values.reshape(37, k) - plain) <= bound)


@pytest.mark.parametrize("kernel", CUSP)
def test_at_a_centre_the_cusp_contributes_nothing(rng, kernel):
    # laplacian, linear, truncated: the symmetric subgradient (0) of the cone;
    # thin_plate_spline: the limit (0) of its gradient
    C = rng.random((40, 2))
    W = rng.standard_normal((40, 1))
    args = dict(kernel=kernel, gamma=gamma_for(kernel), degree=3, coef0=1.0, intercept=np.zeros(1),
                dtype=np.dtype(np.float64), single_output=True)
    full = KernelModel.without_tail(C, W, **args)
    rest = KernelModel.without_tail(C[1:], W[1:], **args)
    _, g_full = full.predict(C[:1], return_grad=True)
    _, g_rest = rest.predict(C[:1], return_grad=True)
    assert np.all(np.isfinite(g_full))
    np.testing.assert_allclose(g_full, g_rest, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- every model
def interp_cases():
    for kernel in RADIAL:
        lo = KERNELS[kernel].min_degree
        for degree in sorted({max(lo, -1), max(lo, 0), max(lo, 1)}):
            yield kernel, degree


@pytest.mark.parametrize(("kernel", "degree"), list(interp_cases()))
def test_interpolate_gradient(rng, kernel, degree):
    X = rng.random((30, 3))
    Y = np.column_stack([np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2], np.cos(2 * X[:, 1])])
    model = interpolate(X, Y, kernel=kernel, gamma=gamma_for(kernel), degree=degree)
    assert model.poly_powers.shape[0] == (0 if degree < 0 else (1 if degree == 0 else 4 if degree == 1 else 10))
    Xq = queries(rng, X, 23)
    values, grad = check_model(model.predict, Xq)
    assert grad.shape == (23, 2, 3)
    np.testing.assert_allclose(values, model.predict(Xq), rtol=1e-13, atol=1e-13 * np.abs(Y).max())
    single = interpolate(X, Y[:, 0], kernel=kernel, gamma=gamma_for(kernel), degree=degree)
    v1, g1 = single.predict(Xq, return_grad=True)
    assert v1.shape == (23,) and g1.shape == (23, 3)
    np.testing.assert_allclose(g1, grad[:, 0], rtol=1e-9, atol=1e-9 * np.abs(grad[:, 0]).max())


@pytest.mark.parametrize("kernel", PCG_KERNELS)  # the positive definite ones (the others: interpolate, networks)
def test_kernel_ridge_cholesky_gradient(rng, kernel):
    X = rng.random((40, 3))
    Y = np.column_stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]])
    model = kernel_ridge(X, Y, kernel=kernel, gamma=gamma_for(kernel), alpha=1e-3, fit_intercept=True,
                         solver="cholesky")
    Xq = queries(rng, X, 19)
    values, grad = check_model(model.predict, Xq)
    assert grad.shape == (19, 2, 3)
    np.testing.assert_allclose(values, model.predict(Xq), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", PCG_KERNELS)
def test_kernel_ridge_nystrom_pcg_gradient(rng, kernel):
    X = rng.random((300, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2]
    model = kernel_ridge(X, y, kernel=kernel, gamma=gamma_for(kernel), alpha=1e-2, solver="nystrom-pcg",
                         n_landmarks=40, seed=0)
    Xq = queries(rng, model.centers, 19)
    values, grad = check_model(model.predict, Xq)
    assert grad.shape == (19, 3)
    np.testing.assert_allclose(values, model.predict(Xq), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_rbf_network_per_centre_gamma_gradient(rng, kernel):
    X = rng.random((200, 3))
    Y = np.column_stack([np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2], X[:, 2]])
    C = X[:12]
    gam = gamma_for(kernel) * rng.uniform(0.5, 1.0, 12)
    net = rbf_network(X, Y, centers=C, gamma=gam, kernel=kernel, alpha=1e-6)
    Xq = queries(rng, C, 17)
    values, grad = check_model(net.predict, Xq)
    assert grad.shape == (17, 3, 3)
    np.testing.assert_allclose(values, net.predict(Xq), rtol=1e-12, atol=1e-12)
    s, gs = net.decision_function(Xq, return_grad=True)
    np.testing.assert_array_equal(gs, grad)


def test_rbf_network_classifier_gives_the_decision_function_gradient(rng):
    X = rng.random((120, 2))
    labels = np.where(X[:, 0] + X[:, 1] > 1, "b", "a")
    net = rbf_network(X, labels, centers=X[:10], gamma=2.0, classify=True)
    Xq = rng.random((9, 2))
    lab, grad = net.predict(Xq, return_grad=True)
    np.testing.assert_array_equal(lab, net.predict(Xq))
    assert_grad(grad, central_diff(net.decision_function, Xq))
    three = np.where(X[:, 0] < 0.3, "a", np.where(X[:, 1] < 0.5, "b", "c"))
    net3 = rbf_network(X, three, centers=X[:10], gamma=2.0, classify=True)
    lab3, grad3 = net3.predict(Xq, return_grad=True)
    assert grad3.shape == (9, 3, 2)
    assert_grad(grad3, central_diff(net3.decision_function, Xq))


@pytest.mark.parametrize("kernel", ["prml", "gaussian"])
def test_gp_mean_gradient(rng, kernel):
    X = rng.random((30, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    theta = [1.0, 6.0, 0.3, 0.2] if kernel == "prml" else [1.0, 6.0]
    gp = gp_regression(X, y, kernel=kernel, theta0=theta, noise=1e-3, optimize=False, normalize_y=True)
    Xq = rng.random((21, 3))
    mean, grad = check_model(gp.predict, Xq)
    assert grad.shape == (21, 3)
    np.testing.assert_allclose(mean, gp.predict(Xq), rtol=1e-12, atol=1e-12)
    p = gp.predict(Xq, return_var=True, return_grad=True)
    q = gp.predict(Xq, return_var=True)
    np.testing.assert_array_equal(p.mean, q.mean)
    np.testing.assert_array_equal(p.var, q.var)
    np.testing.assert_array_equal(p.grad, grad)
    assert q.grad is None


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("k", [1, 2])
def test_nadaraya_watson_gradient(rng, kernel, k):
    X = rng.random((700, 3))  # two column chunks of the fused pass
    Y = np.column_stack([np.sin(3 * X[:, 0]), 100.0 + X[:, 1]])[:, :k]  # an offset: centred for the gradient
    Xq = queries(rng, X, 15) if kernel == "laplacian" else rng.random((15, 3))
    g = 20.0 if kernel == "gaussian" else 30.0

    def f(Z, **kw):
        return nadaraya_watson(X, Y[:, 0] if k == 1 else Y, Z, gamma=g, kernel=kernel, **kw)

    values, grad = check_model(f, Xq)
    assert grad.shape == ((15, 3) if k == 1 else (15, 2, 3))
    np.testing.assert_array_equal(values, f(Xq))


def test_nadaraya_watson_gradient_far_away_and_scaled_data(rng):
    X = rng.random((50, 2))
    y = np.sin(4 * X[:, 0])
    # far from the data: the nearest value, a constant
    v, g = nadaraya_watson(X, y, [[60.0, 60.0]], gamma=5.0, return_grad=True)
    assert np.all(g == 0.0) and not np.signbit(g).any()
    # huge coordinates are scaled inside (by a power of two): the gradient scales back
    s = 2.0**520  # squared distances beyond float64: scaled
    Xq = rng.random((7, 2))
    _, g1 = nadaraya_watson(X, y, Xq, gamma=5.0, return_grad=True)
    _, g2 = nadaraya_watson(X * s, y, Xq * s, gamma=np.ldexp(5.0, -1040), return_grad=True)
    np.testing.assert_allclose(g2 * s, g1, rtol=1e-12)


# ---------------------------------------------------------------- dtypes, threads, messages
def test_float32_models_return_float32_values_and_gradients(rng):
    X = rng.random((40, 3)).astype(np.float32)
    y = np.sin(3 * X[:, 0]).astype(np.float32)
    Xq = rng.random((11, 3)).astype(np.float32)
    m32 = interpolate(X, y, kernel="cubic", degree=1)
    m64 = interpolate(X.astype(np.float64), y.astype(np.float64), kernel="cubic", degree=1)
    v, g = m32.predict(Xq, return_grad=True)
    assert v.dtype == np.float32 and g.dtype == np.float32
    np.testing.assert_allclose(g, m64.predict(Xq.astype(np.float64), return_grad=True)[1], rtol=1e-5, atol=1e-5)
    net = rbf_network(X, y, centers=X[:8], gamma=np.float32(2.0))
    assert all(a.dtype == np.float32 for a in net.decision_function(Xq, return_grad=True))
    gp = gp_regression(X, y, kernel="gaussian", theta0=[1.0, 5.0], noise=1e-3, optimize=False)
    assert all(a.dtype == np.float32 for a in gp.predict(Xq, return_grad=True))
    v, g = nadaraya_watson(X, y, Xq, gamma=10.0, return_grad=True)
    v64, g64 = nadaraya_watson(X.astype(np.float64), y.astype(np.float64), Xq.astype(np.float64), gamma=10.0,
                               return_grad=True)
    assert v.dtype == np.float32 and g.dtype == np.float32
    np.testing.assert_allclose(g, g64, rtol=1e-4, atol=1e-4 * np.abs(g64).max())


def test_gradients_do_not_depend_on_the_thread_count(rng):
    X = rng.random((600, 3))
    y = np.sin(3 * X[:, 0])
    model = kernel_ridge(X, y, gamma=3.0, alpha=1e-3)
    Xq = rng.random((3000, 3))  # enough work for several blocks
    v1, g1 = model.predict(Xq, return_grad=True, n_threads=1)
    v2, g2 = model.predict(Xq, return_grad=True, n_threads=3)
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_array_equal(g1, g2)
    n1 = nadaraya_watson(X, y, Xq, gamma=10.0, return_grad=True, n_threads=1)
    n2 = nadaraya_watson(X, y, Xq, gamma=10.0, return_grad=True, n_threads=3)
    np.testing.assert_array_equal(n1[1], n2[1])


def test_inputs_are_not_modified(rng):
    X = rng.random((30, 2))
    model = interpolate(X, np.sin(X[:, 0]), kernel="thin_plate_spline")
    Xq = rng.random((5, 2))
    before = Xq.copy()
    model.predict(Xq, return_grad=True)
    nadaraya_watson(X, np.sin(X[:, 0]), Xq, gamma=2.0, return_grad=True)
    np.testing.assert_array_equal(Xq, before)


def test_return_grad_must_be_a_bool(rng):
    X = rng.random((20, 2))
    y = X[:, 0]
    model = kernel_ridge(X, y, gamma=1.0, alpha=1e-3)
    net = rbf_network(X, y, centers=X[:4], gamma=1.0)
    gp = gp_regression(X, y, kernel="gaussian", theta0=[1.0, 1.0], optimize=False)
    for call in (lambda v: model.predict(X, return_grad=v), lambda v: net.predict(X, return_grad=v),
                 lambda v: net.decision_function(X, return_grad=v),
                 lambda v: nadaraya_watson(X, y, X, gamma=1.0, return_grad=v)):
        with pytest.raises(TypeError, match=r"`return_grad` must be a bool \(True or False\); got 1\."):
            call(1)
    with pytest.raises(TypeError, match=r"`return_grad` must be True or False; got 'yes'\."):
        gp.predict(X, return_grad="yes")


def test_overflow_and_memory_messages(rng, monkeypatch):
    from fastrbf import _validation

    args = dict(kernel="polynomial", coef0=1.0, intercept=np.zeros(1), dtype=np.dtype(np.float64), single_output=True)
    big = KernelModel.without_tail(np.array([[1e100, 0.0]]), np.ones((1, 1)), gamma=1.0, degree=4, **args)
    with pytest.raises(ValueError, match=r"predict overflows float64 for these `X` and the model's kernel"):
        big.predict([[1e100, 0.0]], return_grad=True)
    # the value at x = 0 is coef0, its gradient gamma * y overflows
    steep = KernelModel.without_tail(np.array([[1e200, 0.0]]), np.ones((1, 1)), gamma=1e200, degree=1, **args)
    with pytest.raises(ValueError, match=r"The gradient overflows float64 for these `X` and the model's kernel"):
        steep.predict([[0.0, 0.0]], return_grad=True)
    X = rng.random((20, 2))
    model = kernel_ridge(X, X[:, 0], gamma=1.0, alpha=1e-3)
    monkeypatch.setattr(_validation, "available_memory", lambda: 1000)
    with pytest.raises(MemoryError, match=r"predict with the gradient: the 500 x 1 x 2 float64 Jacobian"):
        model.predict(rng.random((500, 2)), return_grad=True)
    with pytest.raises(MemoryError, match=r"nadaraya_watson with the gradient for 500 query points"):
        nadaraya_watson(X, X[:, 0], rng.random((500, 2)), gamma=1.0, return_grad=True)


def test_gaussian_gradient_against_the_analytic_formula(rng):
    # sum_j w_j (-2 gamma) (x - c_j) exp(-gamma |x - c_j|^2), by broadcasting
    C = rng.random((600, 4))
    W = rng.standard_normal((600, 2))
    Xq = rng.random((33, 4)) + 50.0  # data away from the origin
    C = C + 50.0
    model = KernelModel.without_tail(C, W, kernel="gaussian", gamma=2.0, degree=3, coef0=1.0,
                                     intercept=np.zeros(2), dtype=np.dtype(np.float64), single_output=False)
    diff = Xq[:, None, :] - C[None, :, :]
    E = np.exp(-2.0 * (diff**2).sum(-1))
    ref = np.einsum("mn,nk,mnd->mkd", E, W, -4.0 * diff)
    _, grad = model.predict(Xq, return_grad=True)
    scale = np.einsum("mn,nk,mnd->mkd", E, np.abs(W), 4.0 * np.abs(diff))
    assert np.all(np.abs(grad - ref) <= 1e-13 + 1e-12 * scale)
