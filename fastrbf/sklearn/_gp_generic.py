"""The Gaussian process of any scikit-learn kernel object, for
:class:`fastrbf.sklearn.GaussianProcessRegressor` given a kernel that fastrbf's GP does
not compute (``ExpSineSquared``, ``DotProduct``, sums and products of kernels, kernels
on structured data).

Decision: such a kernel is not refused.  A user who swaps scikit-learn's estimator for
fastrbf's keeps every kernel working; the covariance and its hyperparameter gradient come
from the kernel object itself (scikit-learn's NumPy code), the Cholesky factor and the
solves from SciPy's LAPACK.  There is nothing of fastrbf's speed here: the kernels of
:mod:`fastrbf.gp._sklearn_kernels` (``ConstantKernel * RBF | Matern | RationalQuadratic
[+ ConstantKernel] [+ WhiteKernel]``) take the compiled path.

The formulas are the textbook ones (Rasmussen and Williams, algorithm 2.1 and eq. 5.9):
``K = k(X, X) + alpha I = L L^T``, weights ``a = K^-1 y``, log marginal likelihood
``-1/2 y^T a - sum log L_ii - n/2 log 2 pi`` summed over the target columns, its gradient
``1/2 tr((a a^T - K^-1) dK/dtheta)``, predictive mean ``k(X*, X) a`` and covariance
``k(X*, X*) - V^T V`` with ``V = L^-1 k(X, X*)``.
"""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg


def _cholesky(K, kernel):
    """The lower Cholesky factor of ``K``; a ``np.linalg.LinAlgError`` (a ValueError)
    naming the kernel and the remedies when it is not positive definite."""
    try:
        return scipy.linalg.cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError as exc:
        raise np.linalg.LinAlgError(
            f"The kernel, {kernel}, is not returning a positive definite matrix. Try gradually increasing the 'alpha' "
            f"parameter of your GaussianProcessRegressor estimator. Remedies: a larger `alpha`, or a WhiteKernel in "
            f"`kernel`.") from exc


def _solve(K, Y, kernel, jitter):
    """``(L, A, lml)``: the factor of ``K`` with ``jitter`` on its diagonal (``K`` is
    modified), the weights ``K^-1 Y`` and the log marginal likelihood of the columns of
    ``Y``."""
    K[np.diag_indices_from(K)] += jitter
    L = _cholesky(K, kernel)
    A = scipy.linalg.cho_solve((L, True), Y, check_finite=False)
    n, t = Y.shape
    value = -0.5 * np.einsum("ik,ik->", Y, A) - t * np.log(np.diag(L)).sum() - 0.5 * t * n * math.log(2 * math.pi)
    return L, A, float(value)


def lml(kernel, X, Y, jitter, eval_gradient):
    """The log marginal likelihood of the target columns ``Y`` (n, t) under ``kernel``,
    and with ``eval_gradient`` its gradient in ``kernel.theta``; a ``LinAlgError`` (a
    ``ValueError``) when the covariance is not positive definite."""
    if not eval_gradient:
        return _solve(kernel(X), Y, kernel, jitter)[2]
    K, K_grad = kernel(X, eval_gradient=True)
    L, A, value = _solve(K, Y, kernel, jitter)
    # 1/2 tr((a a^T - K^-1) dK) per hyperparameter, summed over the columns
    inner = A @ A.T - Y.shape[1] * scipy.linalg.cho_solve((L, True), np.eye(L.shape[0]), check_finite=False)
    return value, 0.5 * np.einsum("ij,jik->k", inner, K_grad)


def fit(kernel, X, Y, y_mean, y_std, jitter):
    """The :class:`KernelObjectGP` of ``kernel`` (hyperparameters fixed) on ``X`` and the
    normalised target columns ``Y`` (n, t)."""
    L, A, value = _solve(kernel(X), Y, kernel, jitter)
    return KernelObjectGP(kernel, X, L, A, y_mean, y_std, jitter, value)


@dataclass(frozen=True, eq=False)
class KernelObjectGP:
    """A GP fitted with a scikit-learn kernel object: the fitted kernel, the training
    inputs (as given: structured data too), the factor and the weights of the normalised
    targets, and the normalisation.  ``predict`` and ``sample_y`` as
    :class:`fastrbf.GaussianProcess`'s (the estimator squeezes one target column)."""

    kernel: Any
    X_train: Any
    factor: np.ndarray
    alpha: np.ndarray  # (n, t)
    y_mean: np.ndarray
    y_std: np.ndarray
    jitter: Any
    log_marginal_likelihood_value: float

    def predict(self, X, return_std=False, return_cov=False, n_threads=None):
        Ks = self.kernel(X, self.X_train)
        mean = Ks @ self.alpha * self.y_std + self.y_mean
        if not (return_std or return_cov):
            return mean
        V = scipy.linalg.solve_triangular(self.factor, Ks.T, lower=True, check_finite=False)
        if return_cov:
            cov = self.kernel(X) - V.T @ V
            return mean, cov[:, :, None] * self.y_std ** 2
        var = np.maximum(self.kernel.diag(X) - np.einsum("ij,ij->j", V, V), 0.0)
        return mean, np.sqrt(var)[:, None] * self.y_std

    def sample_y(self, X, n_samples=1, seed=None, n_threads=None):
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        mean, cov = self.predict(X, return_cov=True)
        return draws(rng, mean, cov, n_samples)


def draws(rng, mean, cov, n_samples):
    """``n_samples`` draws of N(mean, cov) by ``rng`` (a Generator or a RandomState), in
    scikit-learn's layout: (m, n_samples) for one target (``cov`` (m, m)), (m, t,
    n_samples) for ``t`` (``cov`` (m, m, t): one draw per target, in order)."""
    if cov.ndim == 2:
        return rng.multivariate_normal(mean, cov, n_samples).T
    return np.stack([rng.multivariate_normal(mean[:, j], cov[:, :, j], n_samples).T for j in range(cov.shape[2])],
                    axis=1)

