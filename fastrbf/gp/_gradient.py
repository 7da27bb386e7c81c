"""The uncertainty of a Gaussian process's gradient: the variance (or the d x d
covariance) of the gradient of the latent function, and the gradient of the predictive
standard deviation, at query points (``predict(X, return_grad=True, return_std=True)``).

With ``C`` the training covariance (factor ``L``), ``k(x)`` the covariance row of a
query and ``J = d k(x) / d x`` its Jacobian (n x d), the gradient of the posterior
process is Gaussian with covariance (Rasmussen & Williams, eq. 9.1 and section 9.4)

    Cov(grad f(x)) = d^2 k(x, x') / dx dx' |_{x' = x} - J^T C^-1 J,

and the predictive variance ``v(x) = k(x, x) - k(x)^T C^-1 k(x)`` (+ noise) has the
gradient ``d k(x, x) / dx - 2 J^T C^-1 k(x)``; the standard deviation's gradient is
``grad v / (2 sqrt(v))`` (0 where ``v`` is 0, at a noise-free training point: there it
has no derivative).  The sparse GP's DTC variance adds ``+ k^T L^-T B^-1 L^-1 k``
(``B = L_B L_B^T``), and its gradient the terms of the same form.

Decisions:

- For a stationary covariance ``c phi(g0 sum_k (r_k / l_k)^2)`` the prior term is the
  diagonal ``-2 c g0 phi'(0) / l_k^2``: it needs ``phi'(0)`` finite, a kernel twice
  differentiable at 0 (:data:`DPHI0`; a user kernel through its ``derivative``).
  ``laplacian``/``matern12`` and ``truncated`` have sample paths without a derivative:
  refused by name.
- ``J`` comes from one fused pass of the compiled values-and-gradient kernel that
  ``predict(return_grad=True)`` already runs (the query points as its centres, an
  identity as its weights: :data:`GRAD_CHUNK` queries at a time, so the identity's
  zeros cost little), then one triangular solve per chunk for ``[k, J]`` together, the
  chunks on fastrbf's threads (BLAS ``trsm`` through ``ctypes``, without the GIL; one
  BLAS thread each: the same bits for any thread count).  The solve is ``n^2 (d + 1)``
  flops per query against the standard deviation's ``n^2``: ``d + 1`` times as much is
  the floor of this formula (the standard deviation comes from the same solve).
- In float64 whatever the data; the result dtype as ``predict``'s.
"""

import math

import numpy as np

from .. import _dense
from ..kernels import is_user
from ..models.common import values_and_grad
from ._checks import unit_width

#: query points per pass and per triangular solve (the Jacobian of a chunk is n x q x d)
GRAD_CHUNK = 16
#: the Jacobian of a chunk takes at most this many bytes (fewer queries per chunk beyond)
GRAD_CHUNK_BYTES = 64 * 2**20

#: ``phi'(0)`` (the derivative in ``s = gamma r^2`` at 0) of the radial registry kernels
#: that are twice differentiable at 0 in ``r``
DPHI0 = {
    "gaussian": -1.0,  # exp(-s)
    "inverse_multiquadric": -0.5,  # (1 + s)^-1/2
    "inverse_quadratic": -1.0,  # (1 + s)^-1
    "matern32": -1.5,  # (1 + t) exp(-t), t = sqrt(3 s)
    "matern52": -5.0 / 6.0,  # (1 + t + t^2 / 3) exp(-t), t = sqrt(5 s)
    "rational_quadratic": -0.5,  # (1 + s / (2 a))^-a
    "wendland_c2": -10.0,  # (1 - t)^4 (4 t + 1) = 1 - 10 t^2 + ..., t = sqrt(s)
    "wendland_c4": -28.0 / 3.0,  # (1 - t)^6 (35 t^2 + 18 t + 3) / 3 = 1 - 28/3 t^2 + ...
}


def dphi_zero(entry):
    """``phi'(0)`` of the kernel ``entry`` (ValueError naming ``kernel`` when it has none).

    Examples
    --------
    >>> from fastrbf import KERNELS
    >>> dphi_zero(KERNELS["matern52"])
    -0.8333333333333334
    """
    if is_user(entry):
        value = None
        if entry.derivative is not None:
            try:
                value = float(entry.derivative(0.0))
            except (ArithmeticError, ValueError):
                value = None
        if value is None or not math.isfinite(value):
            raise ValueError(f"The variance of the gradient needs the derivative of `kernel` {entry.name!r} at s = 0: "
                             "give a finite one to define_kernel(..., derivative=...).")
        return value
    if entry.name not in DPHI0:
        raise ValueError(f"The variance of the gradient needs a kernel differentiable twice at 0; `kernel` "
                         f"{entry.name!r} is not (its sample paths have no derivative). Use one of "
                         f"{', '.join(sorted(DPHI0))}.")
    return DPHI0[entry.name]


def prior_gradient_variance(entry, amplitude, length_scale):
    """The prior variance of each component of the gradient of ``amplitude phi(g0 sum_k
    (r_k / l_k)^2)``, shape (d,): ``-2 amplitude g0 phi'(0) / l_k^2`` (ValueError naming
    ``kernel`` when ``phi'(0)`` is not finite).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import KERNELS
    >>> prior_gradient_variance(KERNELS["gaussian"], 2.0, np.array([1.0, 0.5])).tolist()
    [2.0, 8.0]
    """
    return -2.0 * amplitude * unit_width(entry) * dphi_zero(entry) / np.asarray(length_scale, dtype=np.float64) ** 2


def chunk_rows(n, d):
    """Query points per chunk for ``n`` training (or landmark) rows of ``d`` features."""
    return max(1, min(GRAD_CHUNK, GRAD_CHUNK_BYTES // (8 * max(1, n * d))))


def stationary_rows(X, Q, *, kernel, gamma, coef0, length_scale, amplitude, constant, n_threads):
    """``(k, J)``: the covariance ``amplitude phi + constant`` between the rows ``X``
    (n, d) and the queries ``Q`` (q, d), shape (n, q), and its Jacobian in the query,
    shape (n, q, d), from one fused values-and-gradient pass (the gradient in the first
    argument of a stationary kernel is minus that in the second)."""
    vals, G = values_and_grad(X, Q, np.eye(Q.shape[0]), kernel=kernel, gamma=gamma, coef0=coef0, n_threads=n_threads,
                              length_scale=length_scale)
    vals *= amplitude
    vals += constant
    G *= -amplitude
    return vals, G


def solve_lower(L, B):
    """``L^-1 B`` (a new Fortran-ordered array) for the lower triangle of ``L``
    (Fortran-ordered): BLAS ``trsm`` on one thread, without the GIL (SciPy's
    ``solve_triangular`` holds it), so chunks of queries solve in parallel on
    fastrbf's threads.

    Examples
    --------
    >>> import numpy as np
    >>> solve_lower(np.asfortranarray([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]])).ravel().tolist()
    [1.0, 2.0]
    """
    V = np.array(B, dtype=np.float64, order="F", copy=True)
    _dense.trsm(L, V, 1)
    return V


def moments(L, LB, K, J, prior, dprior, pgrad, noise, full):
    """``(variance, grad std, gradient variance)`` at q queries from the covariance rows ``K``
    (n, q) and their Jacobian ``J`` (n, q, d), ``L`` and ``LB`` Fortran-ordered lower
    factors: the variance ``max(prior - |L^-1 k|^2, 0)
    [+ |LB^-1 L^-1 k|^2] + noise`` (``prior`` of shape (q,)), its gradient with
    ``dprior`` (q, d) the gradient of the prior variance, and the gradient's covariance
    with the prior's diagonal ``pgrad`` (d,): (q, d) diagonals, or (q, d, d) when
    ``full``."""
    n, q, d = J.shape
    V = solve_lower(L, np.concatenate([K, J.reshape(n, q * d)], axis=1))
    Vk, VJ = V[:, :q], V[:, q:].reshape(n, q, d)
    var = np.maximum(prior - np.einsum("iq,iq->q", Vk, Vk), 0.0)
    dvar = dprior - 2.0 * np.einsum("iqa,iq->qa", VJ, Vk)
    if full:
        gv = np.broadcast_to(np.diag(pgrad), (q, d, d)) - np.einsum("iqa,iqb->qab", VJ, VJ)
    else:
        gv = pgrad - np.einsum("iqa,iqa->qa", VJ, VJ)
    if LB is not None:
        U = solve_lower(LB, V)
        Uk, UJ = U[:, :q], U[:, q:].reshape(n, q, d)
        var += np.einsum("iq,iq->q", Uk, Uk)
        dvar += 2.0 * np.einsum("iqa,iq->qa", UJ, Uk)
        gv = gv + (np.einsum("iqa,iqb->qab", UJ, UJ) if full else np.einsum("iqa,iqa->qa", UJ, UJ))
    var += noise
    std = np.sqrt(var)
    safe = np.where(std > 0, std, 1.0)
    gstd = np.where((std > 0)[:, None], dvar / (2.0 * safe[:, None]), 0.0)
    if not full:
        gv = np.maximum(gv, 0.0)  # a variance: rounding can make a tiny one negative
    return var, gstd, np.ascontiguousarray(gv)


def scaled(gstd, gv, y_std, single):
    """The gradient of the standard deviation and the gradient's (co)variance in the
    units of ``y``: ``|y_std|`` and ``y_std^2`` per output, (q, [k,] d[, d])."""
    if single:
        return gstd * abs(float(y_std[0])), gv * float(y_std[0]) ** 2
    s = np.abs(y_std)
    shape = (1, -1) + (1,) * (gv.ndim - 1)
    return gstd[:, None, :] * s[None, :, None], gv[:, None] * (s**2).reshape(shape)
