"""The uncertainty of a GP's gradient (``predict(X, return_grad=True, return_std=True)``):
against Rasmussen & Williams eq. 9.1 in NumPy, and against central differences of the
GP's own posterior covariance (the law of its posterior samples) and standard
deviation."""

import numpy as np
import pytest
from user_kernel_defs import gauss_user, matern52_user

from fastrbf import gaussian_process, reference, sparse_gaussian_process


def _data(rng, n=40, d=2):
    X = rng.uniform(0, 1, (n, d))
    return X, np.sin(4 * X[:, 0]) + X[:, 1] ** 2


def _fd_gradient_cov(gp, x, h):
    """The covariance of the central-difference gradient of the latent function at
    ``x``, from the predictive covariance at the 2 d stencil points (noise removed)."""
    d = x.size
    P = np.vstack([x + s * h * e for e in np.eye(d) for s in (1.0, -1.0)])
    _, C = gp.predict(P, return_cov=True)
    C = C - gp.noise * np.eye(2 * d)
    S = np.zeros((d, 2 * d))  # the stencil: (f(x + h e_a) - f(x - h e_a)) / 2h
    for a in range(d):
        S[a, 2 * a], S[a, 2 * a + 1] = 1 / (2 * h), -1 / (2 * h)
    return S @ C @ S.T


def _fd_std_gradient(gp, x, h):
    out = []
    for e in np.eye(x.size):
        _, s = gp.predict(np.vstack([x + h * e, x - h * e]), return_std=True)
        out.append((s[0] - s[1]) / (2 * h))
    return np.array(out)


def test_matches_rasmussen_williams_eq_9_1(rng):
    X, y = _data(rng)
    gp = gaussian_process(X, y, kernel="gaussian", amplitude=1.3, length_scale=[0.4, 0.7], constant=0.2, noise=1e-3,
                          optimize=False)
    Q = rng.uniform(0, 1, (7, 2))
    mean, cov, grad, gcov, gstd = gp.predict(Q, return_cov=True, return_grad=True)
    gm, gc, gs = reference.gp_gradient_moments(X, y, Q, amplitude=1.3, length_scale=[0.4, 0.7], noise=1e-3,
                                               constant=0.2)
    np.testing.assert_allclose(grad, gm, rtol=0, atol=1e-9 * np.abs(gm).max())
    np.testing.assert_allclose(gcov, gc, rtol=0, atol=1e-9 * np.abs(gc).max())
    np.testing.assert_allclose(gstd, gs, rtol=0, atol=1e-9 * np.abs(gs).max())
    # the diagonal with return_std, and the rest of the tuple as without the gradient
    m2, std, g2, gvar, gstd2 = gp.predict(Q, return_std=True, return_grad=True)
    np.testing.assert_allclose(gvar, np.diagonal(gc, axis1=1, axis2=2), rtol=0, atol=1e-9 * np.abs(gc).max())
    np.testing.assert_array_equal(gstd2, gstd)
    # the standard deviation comes from the same solves as its gradient: equal to the one
    # predicted alone up to the rounding of a BLAS solve of other widths
    np.testing.assert_allclose(std, gp.predict(Q, return_std=True)[1], rtol=1e-12)
    np.testing.assert_array_equal(m2, mean)


# Central differences of the covariance lose about 1e-16 / h^2 of it to cancellation, so
# they are extrapolated (Richardson) from h and 2 h: to h^4 for the smooth kernels; to h^2
# for matern52 and wendland_c4 (an r^5 term); matern32 and wendland_c2 are only just twice
# differentiable (an r^3 term: the differences converge as h), so from h^2 at a small h.
SMOOTH = (1e-3, 2, 3e-7, 1e-7)


@pytest.mark.parametrize("kernel, h, order, tol, tol_std", [
    ("gaussian", *SMOOTH), ("rational_quadratic", *SMOOTH), ("inverse_multiquadric", *SMOOTH),
    ("inverse_quadratic", *SMOOTH), (gauss_user, *SMOOTH), ("prml", *SMOOTH),
    ("matern52", 3e-4, 2, 5e-7, 1e-7), ("wendland_c4", 3e-4, 2, 5e-7, 3e-6),
    ("matern32", 3e-5, 1, 1e-6, 3e-6), ("wendland_c2", 3e-5, 1, 1e-6, 5e-6)])
def test_gradient_moments_against_central_differences(rng, kernel, h, order, tol, tol_std):
    X, y = _data(rng)
    kw = {"length_scale": 0.5, "constant": 0.3, "linear": 0.7} if kernel == "prml" else {"length_scale": [0.4, 0.7]}
    gp = gaussian_process(X, y, kernel=kernel, amplitude=1.3, noise=1e-3, optimize=False, **kw)
    for x in (np.array([0.31, 0.52]), X[3] + 1e-3):
        _, _, grad, gcov, gstd = gp.predict(x[None], return_cov=True, return_grad=True)
        f1, f2 = _fd_gradient_cov(gp, x, h), _fd_gradient_cov(gp, x, 2 * h)
        fd = (4 * f1 - f2) / 3 if order == 2 else 2 * f1 - f2
        np.testing.assert_allclose(gcov[0], fd, rtol=0, atol=tol * np.abs(fd).max())
        np.testing.assert_allclose(gstd[0], _fd_std_gradient(gp, x, 1e-5), rtol=0, atol=tol_std * np.abs(gstd).max())
        m = [gp.predict(np.vstack([x + 1e-5 * e, x - 1e-5 * e])) for e in np.eye(2)]
        np.testing.assert_allclose(grad[0], [(a[0] - a[1]) / 2e-5 for a in m], rtol=0, atol=1e-7 * np.abs(grad).max())


def test_several_outputs_are_scaled_per_output(rng):
    X, y = _data(rng)
    Y = np.c_[y, 30.0 * X[:, 0] * X[:, 1] - 4.0]
    kw = {"kernel": "matern52", "length_scale": [0.4, 0.7], "noise": 1e-3, "optimize": False, "normalize_y": True}
    both = gaussian_process(X, Y, **kw)
    Q = rng.uniform(0, 1, (5, 2))
    _, std, grad, gvar, gstd = both.predict(Q, return_std=True, return_grad=True)
    assert grad.shape == gvar.shape == gstd.shape == (5, 2, 2)
    for j in range(2):
        one = gaussian_process(X, Y[:, j], **kw)
        _, s1, g1, v1, gs1 = one.predict(Q, return_std=True, return_grad=True)
        np.testing.assert_allclose(gvar[:, j], v1, rtol=1e-10)
        np.testing.assert_allclose(gstd[:, j], gs1, rtol=1e-10, atol=1e-12 * np.abs(gs1).max())


def test_float32_threads_and_errors(rng):
    X, y = _data(rng)
    gp = gaussian_process(X.astype(np.float32), y.astype(np.float32), kernel="gaussian", noise=1e-3, optimize=False)
    out = gp.predict(X[:3].astype(np.float32), return_std=True, return_grad=True)
    assert [a.dtype for a in out] == [np.float32] * 5
    one = gp.predict(X[:3], return_std=True, return_grad=True, n_threads=1)
    two = gp.predict(X[:3], return_std=True, return_grad=True, n_threads=2)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a, b)
    for kernel in ("laplacian", "matern12", "truncated"):
        g = gaussian_process(X, y, kernel=kernel, noise=1e-3, optimize=False)
        g.predict(X[:2], return_grad=True)  # the mean's gradient alone is defined away from the data
        with pytest.raises(ValueError, match=rf"needs a kernel differentiable twice at 0; `kernel` '{kernel}'"):
            g.predict(X[:2], return_std=True, return_grad=True)
    g = gaussian_process(X, y, kernel=matern52_user, noise=1e-3, optimize=False)
    with pytest.raises(ValueError, match=r"needs the derivative of `kernel` 'matern52_user' at s = 0"):
        g.predict(X[:2], return_std=True, return_grad=True)


def test_sparse_gp_against_the_dtc_posterior(rng):
    X, y = _data(rng, n=300)
    y = y + 0.01 * rng.standard_normal(300)
    ls, c, s2 = np.array([0.4, 0.7]), 1.3, 1e-3
    # few landmarks keep K_mm well conditioned: the gradient variance is a small difference
    # of terms thousands of times larger (with 30 landmarks two stable formulas agreed to 1e-4)
    gp = sparse_gaussian_process(X, y, n_landmarks=15, kernel="gaussian", amplitude=c, length_scale=ls, noise=s2,
                                 optimize=False, seed=0)
    Z = gp.landmarks

    def k(A, B):
        D = (A[:, None, :] - B[None, :, :]) / ls
        return c * np.exp(-0.5 * np.sum(D * D, axis=2))

    Kmn = k(Z, X)
    Lm = np.linalg.cholesky(k(Z, Z) + gp.jitter * np.eye(15))
    Ls = np.linalg.cholesky(k(Z, Z) + gp.jitter * np.eye(15) + Kmn @ Kmn.T / s2)

    def cov(P):  # k - k_pm (K_mm^-1 - (K_mm + K_mn K_nm / s2)^-1) k_mp: the DTC posterior of the latent function
        V, W = np.linalg.solve(Lm, k(Z, P)), np.linalg.solve(Ls, k(Z, P))
        return k(P, P) - V.T @ V + W.T @ W

    def fd_var(x, h):
        P = np.vstack([x + s * h * e for e in np.eye(2) for s in (1.0, -1.0)])
        C = cov(P)
        return np.array([C[2 * a, 2 * a] + C[2 * a + 1, 2 * a + 1] - 2 * C[2 * a, 2 * a + 1] for a in range(2)]) / (4 * h * h)

    for x in (np.array([0.31, 0.52]), X[5]):
        mean, std, grad, gvar, gstd = gp.predict(x[None], return_std=True, return_grad=True)
        np.testing.assert_allclose(gvar[0], (4 * fd_var(x, 1e-3) - fd_var(x, 2e-3)) / 3, rtol=1e-6)
        np.testing.assert_allclose(gstd[0], _fd_std_gradient(gp, x, 1e-5), rtol=0, atol=1e-7 * np.abs(gstd).max())
        m = [gp.predict(np.vstack([x + 1e-5 * e, x - 1e-5 * e])) for e in np.eye(2)]
        np.testing.assert_allclose(grad[0], [(a[0] - a[1]) / 2e-5 for a in m], rtol=0, atol=1e-7 * np.abs(grad).max())
    mean, grad = gp.predict(X[:4], return_grad=True)
    assert grad.shape == (4, 2)

