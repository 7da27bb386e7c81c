"""Plain, obviously-correct NumPy versions of fastrbf's numerical functions.

The oracle of the tests and the "naive NumPy" baseline of the benchmarks.  It imports
nothing from fastrbf.  Formulas are the textbook ones: broadcast differences, then the
kernel formula, then ``@``; rows are processed in blocks only so that the broadcast
temporary stays below ~128 MiB (the arithmetic is the same).  Computation is in float64
unless every input is float32.
"""

import numpy as np

_BLOCK_ELEMENTS = 1 << 24


def _dtype(*arrays):
    return np.float32 if all(np.asarray(a).dtype == np.float32 for a in arrays if a is not None) else np.float64


def sqdist(X, Y=None):
    """``D[i, j] = sum_k (X[i, k] - Y[j, k])**2`` by broadcasting."""
    dt = _dtype(X, Y)
    X = np.asarray(X, dtype=dt)
    Y = X if Y is None else np.asarray(Y, dtype=dt)
    n, m, d = X.shape[0], Y.shape[0], X.shape[1]
    out = np.empty((n, m), dtype=dt)
    step = max(1, _BLOCK_ELEMENTS // max(1, m * d))
    for i in range(0, n, step):
        diff = X[i : i + step, None, :] - Y[None, :, :]
        out[i : i + step] = (diff * diff).sum(axis=-1)
    return out


def kernel_function(name, s, *, degree=3, coef0=1.0):
    """The kernel formula.  Radial kernels take ``s = gamma r**2``; dot-product kernels
    (polynomial, tanh) take ``s = gamma x.y``."""
    s = np.asarray(s)
    if name == "gaussian":
        return np.exp(-s)
    r = np.sqrt(s) if name not in ("polynomial", "tanh") else np.zeros_like(s)  # r: radial kernels only
    if name in ("laplacian", "matern12"):
        return np.exp(-r)
    if name == "matern32":
        t = np.sqrt(3.0) * r
        return (1 + t) * np.exp(-t)
    if name == "matern52":
        t = np.sqrt(5.0) * r
        return (1 + t + t**2 / 3) * np.exp(-t)
    if name == "wendland_c2":
        return np.where(r < 1, (1 - r) ** 4 * (4 * r + 1), 0.0).astype(s.dtype)
    if name == "rational_quadratic":
        return (1.0 + s / (2.0 * coef0)) ** -coef0
    if name == "wendland_c4":
        return np.where(r < 1, (1 - r) ** 6 * (35 * r**2 + 18 * r + 3) / 3, 0.0).astype(s.dtype)
    if name == "multiquadric":
        return -np.sqrt(1 + s)
    if name == "inverse_multiquadric":
        return 1 / np.sqrt(1 + s)
    if name == "inverse_quadratic":
        return 1 / (1 + s)
    if name == "thin_plate_spline":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r > 0, r**2 * np.log(np.where(r > 0, r, 1)), 0.0).astype(s.dtype)
    if name == "cubic":
        return r**3
    if name == "quintic":
        return -(r**5)
    if name == "linear":
        return -r
    if name == "truncated":
        return np.where(r <= 1, (1 - r) ** 2, 0.0).astype(s.dtype)
    if name == "polynomial":
        return (coef0 + s) ** degree
    if name == "tanh":
        return np.tanh(s + coef0)
    raise ValueError(f"unknown kernel {name!r}")


def gram(X, Y=None, *, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0):
    """``K[i, j] = k(X[i], Y[j])``; ``gamma`` a scalar or one value per column."""
    dt = _dtype(X, Y)
    X = np.asarray(X, dtype=dt)
    Y = X if Y is None else np.asarray(Y, dtype=dt)
    g = np.asarray(gamma, dtype=dt)
    if kernel in ("polynomial", "tanh"):
        return kernel_function(kernel, (X @ Y.T) * g, degree=degree, coef0=coef0).astype(dt)
    return kernel_function(kernel, sqdist(X, Y) * g, degree=degree, coef0=coef0).astype(dt)


def gram_matvec(X, Y, V, *, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0):
    """Build ``K(X, Y)``, then multiply: ``K @ V``."""
    return gram(X, Y, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0) @ np.asarray(V)


def lloyd_assign(X, centers):
    """Nearest centre by the full distance matrix and ``np.argmin`` (ties: lowest index)."""
    D = sqdist(X, centers)
    labels = np.argmin(D, axis=1)
    return labels.astype(np.int64), D[np.arange(D.shape[0]), labels]


def lloyd_update(X, labels, n_clusters, *, sample_weight=None):
    """Weighted mean per cluster (NaN for an empty cluster) and the summed weights."""
    X = np.asarray(X, dtype=np.float64)
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    centers = np.full((n_clusters, X.shape[1]), np.nan)
    counts = np.zeros(n_clusters)
    for k in range(n_clusters):
        members = labels == k
        counts[k] = w[members].sum()
        if counts[k] > 0:
            centers[k] = (w[members, None] * X[members]).sum(axis=0) / counts[k]
    return centers, counts


def kmeans(X, centers, *, max_iter=300):
    """Lloyd's loop: assign, update, until no label changes."""
    X = np.asarray(X, dtype=np.float64)
    centers = np.array(centers, dtype=np.float64)
    labels = None
    for _ in range(max_iter):
        new_labels, _ = lloyd_assign(X, centers)
        if labels is not None and np.array_equal(new_labels, labels):
            break
        labels = new_labels
        new_centers, counts = lloyd_update(X, labels, centers.shape[0])
        centers = np.where(counts[:, None] > 0, new_centers, centers)
    labels, d2 = lloyd_assign(X, centers)
    return centers, labels, float(d2.sum())


# ---------------------------------------------------------------- solves and models
def solve_regularized(K, Y, *, alpha):
    """``(K + alpha I)^-1 Y`` by ``numpy.linalg.solve`` (``alpha`` scalar or per row)."""
    K = np.asarray(K, dtype=np.float64)
    A = K + np.diag(np.broadcast_to(np.asarray(alpha, dtype=np.float64), (K.shape[0],)))
    return np.linalg.solve(A, np.asarray(Y, dtype=np.float64))


def kernel_ridge(X, Y, *, kernel="gaussian", gamma=1.0, alpha=1.0):
    """Dual weights of kernel ridge regression: the broadcast Gram matrix, then solve."""
    return solve_regularized(gram(np.asarray(X, dtype=np.float64), kernel=kernel, gamma=gamma), Y, alpha=alpha)


def monomials(X, degree):
    """The monomials of total degree <= ``degree`` of the rows of X (unscaled)."""
    from itertools import combinations_with_replacement

    X = np.asarray(X, dtype=np.float64)
    cols = [np.ones(X.shape[0])]
    for deg in range(1, degree + 1):
        for combo in combinations_with_replacement(range(X.shape[1]), deg):
            cols.append(np.prod(X[:, list(combo)], axis=1))
    return np.stack(cols, axis=1)


def interpolate(X, Y, Xq, *, kernel, gamma, degree, alpha=0.0):
    """RBF interpolant with a polynomial tail evaluated at ``Xq``: the full saddle-point
    system ``[[K + alpha I, P], [P^T, 0]]`` solved by ``numpy.linalg.solve``."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n = X.shape[0]
    P = monomials(X, degree) if degree >= 0 else np.zeros((n, 0))
    q = P.shape[1]
    A = np.zeros((n + q, n + q))
    A[:n, :n] = gram(X, kernel=kernel, gamma=gamma) + np.diag(np.broadcast_to(alpha, (n,)))
    A[:n, n:] = P
    A[n:, :n] = P.T
    rhs = np.concatenate([Y.reshape(n, -1), np.zeros((q, Y.reshape(n, -1).shape[1]))])
    sol = np.linalg.solve(A, rhs)
    Pq = monomials(Xq, degree) if degree >= 0 else np.zeros((len(Xq), 0))
    out = gram(np.asarray(Xq, dtype=np.float64), X, kernel=kernel, gamma=gamma) @ sol[:n] + Pq @ sol[n:]
    return out[:, 0] if Y.ndim == 1 else out


def rbf_design(X, centers, *, gamma, kernel="gaussian"):
    """The explicit N x K design matrix Phi (gamma scalar or one per centre)."""
    return gram(np.asarray(X, dtype=np.float64), np.asarray(centers, dtype=np.float64), kernel=kernel, gamma=gamma)


def rbf_network(X, Y, centers, *, gamma, alpha=0.0, bias=True, kernel="gaussian"):
    """(weights, bias) of an RBF network from the explicit design matrix:
    ``numpy.linalg.lstsq`` for ``alpha = 0``, else ridge on centred Phi and Y (the bias
    not penalised)."""
    Phi = rbf_design(X, centers, gamma=gamma, kernel=kernel)
    Y = np.asarray(Y, dtype=np.float64)
    Y2 = Y.reshape(Y.shape[0], -1)
    K = Phi.shape[1]
    if alpha == 0:
        A = np.hstack([Phi, np.ones((Phi.shape[0], 1))]) if bias else Phi
        sol = np.linalg.lstsq(A, Y2, rcond=None)[0]
        return sol[:K], (sol[K] if bias else np.zeros(Y2.shape[1]))
    if not bias:
        return np.linalg.solve(Phi.T @ Phi + alpha * np.eye(K), Phi.T @ Y2), np.zeros(Y2.shape[1])
    mp, my = Phi.mean(axis=0), Y2.mean(axis=0)
    Pc, Yc = Phi - mp, Y2 - my
    W = np.linalg.solve(Pc.T @ Pc + alpha * np.eye(K), Pc.T @ Yc)
    return W, my - mp @ W


def rbf_forward(X, Y, candidates, *, gamma, n_centers, alpha=0.0, bias=True, tol=None, kernel="gaussian",
                dependent=1e-10):
    """(selection, relative errors): forward selection of RBF-network centres by brute
    force.  The full N x C candidate matrix, augmented for the ridge: ``M = [[Phi, 1],
    [sqrt(alpha) I, 0]]`` against ``[Y; 0]`` (the bias column last, never penalised).  At
    each step every remaining candidate is added in turn to the chosen columns and least
    squares refitted by ``numpy.linalg.lstsq``; the candidate of smallest residual (the
    ridge objective) is chosen, ties to the lowest index.  A candidate whose column,
    least-squares projected on the chosen ones, leaves a squared norm at most
    ``dependent`` times its own is skipped.  The errors are the residual after each
    chosen centre over ``sum ||y - mean(y)||^2``; stops after ``n_centers``, below ``tol``
    or when no candidate is left."""
    Phi = rbf_design(X, candidates, gamma=gamma, kernel=kernel)
    Y = np.asarray(Y, dtype=np.float64)
    Y2 = Y.reshape(Y.shape[0], -1)
    N, C = Phi.shape
    M = np.vstack([np.hstack([Phi, np.ones((N, 1))]), np.hstack([np.sqrt(alpha) * np.eye(C), np.zeros((C, 1))])])
    Ya = np.vstack([Y2, np.zeros((C, Y2.shape[1]))])
    den = float(np.sum((Y2 - Y2.mean(axis=0)) ** 2)) or 1.0
    chosen: list[int] = []
    errors: list[float] = []
    base = [C] if bias else []
    while len(chosen) < n_centers:
        S = base + chosen
        cols = M[:, :C]
        if S:
            proj = M[:, S] @ np.linalg.lstsq(M[:, S], cols, rcond=None)[0]
            left = np.sum((cols - proj) ** 2, axis=0)
        else:
            left = np.sum(cols**2, axis=0)
        obj = np.full(C, np.inf)
        for j in range(C):
            if j in chosen or not left[j] > dependent * np.sum(cols[:, j] ** 2):
                continue
            A = M[:, [*S, j]]
            sol = np.linalg.lstsq(A, Ya, rcond=None)[0]
            obj[j] = np.sum((Ya - A @ sol) ** 2)
        if not np.isfinite(obj).any():
            break
        j = int(np.argmin(obj))
        chosen.append(j)
        errors.append(obj[j] / den)
        if tol is not None and errors[-1] < tol:
            break
    return np.array(chosen, dtype=np.int64), np.array(errors)


# ---------------------------------------------------------------- neighbours
def knn(X, Xq, k):
    """(indices, squared distances) of the k nearest: full distance rows, stable argsort."""
    D = sqdist(Xq, X)
    idx = np.argsort(D, axis=1, kind="stable")[:, :k]
    return idx, np.take_along_axis(D, idx, axis=1)


def nadaraya_watson(X, Y, Xq, *, gamma, kernel="gaussian"):
    """``K @ Y / K.sum(1)`` with the full kernel matrix (NaN where every weight underflows)."""
    K = gram(np.asarray(Xq, dtype=np.float64), np.asarray(X, dtype=np.float64), kernel=kernel, gamma=gamma)
    Y = np.asarray(Y, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (K @ Y) / (K.sum(axis=1) if Y.ndim == 1 else K.sum(axis=1)[:, None])


def rbf_vote(X, Y, Xq, *, gamma):
    """The uniform-influence RBF sum ``K(Xq, X) @ Y``."""
    return gram(np.asarray(Xq, dtype=np.float64), np.asarray(X, dtype=np.float64), gamma=gamma) @ np.asarray(Y, dtype=np.float64)


# ---------------------------------------------------------------- Gaussian processes
def prml_kernel(X, Y, theta):
    """PRML 6.63: ``t0 exp(-t1/2 ||x - y||^2) + t2 + t3 x.y`` (or the first term for two
    parameters)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    K = theta[0] * np.exp(-0.5 * theta[1] * sqdist(X, Y))
    if len(theta) == 4:
        K = K + theta[2] + theta[3] * (X @ Y.T)
    return K


def gp_log_marginal_likelihood(X, y, theta, *, noise):
    """(log marginal likelihood, gradient in log(theta..., noise)) by the textbook
    formulas with an explicit inverse: ``0.5 tr((a a^T - C^-1) dC/dlog p)``."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = X.shape[0]
    C = prml_kernel(X, X, theta) + noise * np.eye(n)
    Ci = np.linalg.inv(C)
    a = Ci @ y
    lml = -0.5 * y @ a - 0.5 * np.linalg.slogdet(C)[1] - 0.5 * n * np.log(2 * np.pi)
    E = theta[0] * np.exp(-0.5 * theta[1] * sqdist(X, X))
    dC = [E, E * (-0.5 * theta[1] * sqdist(X, X))]
    if len(theta) == 4:
        dC += [theta[2] * np.ones((n, n)), theta[3] * (X @ X.T)]
    dC.append(noise * np.eye(n))
    W = np.outer(a, a) - Ci
    return lml, np.array([0.5 * np.sum(W * D) for D in dC])


def gp_predict(X, y, Xq, theta, *, noise):
    """Predictive mean and variance (noise included) by the textbook formulas."""
    C = prml_kernel(X, X, theta) + noise * np.eye(len(X))
    k = prml_kernel(X, Xq, theta)
    mean = k.T @ np.linalg.solve(C, np.asarray(y, dtype=np.float64))
    var = np.diag(prml_kernel(Xq, Xq, theta)) + noise - np.sum(k * np.linalg.solve(C, k), axis=0)
    return mean, var
# ---------------------------------------------------------------- kernel approximations
def random_fourier_transform(X, W, b):
    """Random Fourier features ``sqrt(2/D) cos(X @ W + b)`` (scikit-learn ``RBFSampler``)."""
    dt = _dtype(X, W)
    P = np.asarray(X, dtype=dt) @ np.asarray(W, dtype=dt) + np.asarray(b, dtype=dt)
    return (np.sqrt(2.0 / P.shape[1]) * np.cos(P)).astype(dt)


def random_fourier_pair_transform(X, W):
    """The pair form ``sqrt(1/D') [cos(X @ W), sin(X @ W)]`` (``D'`` = columns of W)."""
    dt = _dtype(X, W)
    P = np.asarray(X, dtype=dt) @ np.asarray(W, dtype=dt)
    return (np.sqrt(1.0 / P.shape[1]) * np.hstack([np.cos(P), np.sin(P)])).astype(dt)


def nystroem_transform(X, landmarks, *, kernel="gaussian", gamma=1.0, alpha=0.0, degree=3, coef0=1.0):
    """Nystroem features ``K(X, L) K(L, L)^{-1/2}`` by the SVD of ``K(L, L) + alpha I``
    (pseudo-inverse square root: singular values below ``m * eps * max`` dropped)."""
    X = np.asarray(X, dtype=np.float64)
    L = np.asarray(landmarks, dtype=np.float64)
    Kmm = gram(L, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0) + alpha * np.eye(L.shape[0])
    U, s, Vt = np.linalg.svd(Kmm)
    keep = s > L.shape[0] * np.finfo(np.float64).eps * s.max()
    N = (U[:, keep] / np.sqrt(s[keep])) @ Vt[keep]
    return gram(X, L, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0) @ N.T


def nystroem_kernel_ridge(X, Y, L, *, gamma, alpha, kernel="gaussian", degree=3, coef0=1.0):
    """Nystroem kernel ridge coefficients: ``beta`` solving ``(K_nm^T K_nm + alpha K_mm)
    beta = K_nm^T Y`` with the explicit ``K_nm = K(X, L)`` (n x m) and
    ``numpy.linalg.solve``; predictions are ``K(x, L) beta``."""
    X = np.asarray(X, dtype=np.float64)
    L = np.asarray(L, dtype=np.float64)
    Knm = gram(X, L, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    Kmm = gram(L, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    return np.linalg.solve(Knm.T @ Knm + alpha * Kmm, Knm.T @ np.asarray(Y, dtype=np.float64))


def rpcholesky(K, m, rng, *, block_size=120):
    """Blocked randomly pivoted Cholesky with rejection on the full kernel matrix ``K``
    (n x n), drawing from ``rng`` in the order :func:`fastrbf.rpcholesky` does: per
    round, ``b`` candidates ``searchsorted(cumsum(d), U * sum(d))`` from the residual
    diagonal ``d``, then ``b`` uniforms; candidate ``j`` is accepted when its residual
    after the accepted ones before it exceeds its uniform times its residual at the
    draw.  Columns one pivot at a time (``G = K[:, s] - F F[s]^T``, ``F_s = G /
    sqrt(G[s])``).  Returns ``(pivots, F)``; stops early when the residual trace is
    below ``n eps max diag(K)``."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    F = np.zeros((n, 0))
    d = np.diag(K).copy()
    floor = n * np.finfo(np.float64).eps * d.max()
    piv: list[int] = []
    idle = 0
    while len(piv) < m and idle < 8:
        c = np.cumsum(d)
        if not c[-1] > floor:
            break
        b = min(block_size, m - len(piv))
        cand = np.minimum(np.searchsorted(c, rng.random(b) * c[-1], side="right"), n - 1)
        bar = rng.random(b) * d[cand]
        accepted = []
        for j, s in enumerate(cand):
            r = K[s, s] - F[s] @ F[s]  # the residual after the pivots taken so far
            if r > 0 and r > bar[j]:
                g = K[:, s] - F @ F[s]
                F = np.column_stack([F, g / np.sqrt(r)])
                accepted.append(s)
        idle = 0 if accepted else idle + 1
        piv += accepted
        d = np.maximum(np.diag(K) - np.sum(F * F, axis=1), 0.0)
        d[piv] = 0.0
    return np.array(piv, dtype=np.int64), F


def gp_gradient_moments(X, y, Xq, *, amplitude, length_scale, noise, constant=0.0):
    """The gradient of an exact GP with the covariance ``amplitude exp(-sum_k (x_k -
    y_k)^2 / (2 l_k^2)) + constant + noise [x == y]`` (scikit-learn's ``C * RBF + C +
    WhiteKernel``), with the derivative covariances of Rasmussen & Williams eq. 9.1
    written out: ``(mean gradient (q, d), gradient covariance (q, d, d), gradient of the
    predictive standard deviation (q, d))``, all with explicit matrices."""
    X = np.asarray(X, dtype=np.float64)
    Xq = np.asarray(Xq, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ls = np.broadcast_to(np.asarray(length_scale, dtype=np.float64), (X.shape[1],))

    def k(A, B):
        D = (A[:, None, :] - B[None, :, :]) / ls
        return amplitude * np.exp(-0.5 * np.sum(D * D, axis=2)) + constant

    C = k(X, X) + noise * np.eye(X.shape[0])
    Ci = np.linalg.inv(C)
    a = Ci @ y
    gmean, gcov, gstd = [], [], []
    for x in Xq:
        kx = k(x[None], X)[0]  # (n,)
        J = -(amplitude * np.exp(-0.5 * np.sum(((x - X) / ls) ** 2, axis=1)))[:, None] * (x - X) / ls**2  # dk/dx
        gmean.append(J.T @ a)
        gcov.append(np.diag(amplitude / ls**2) - J.T @ Ci @ J)  # d2k/dx dx' at x = x' minus the data's share
        var = amplitude + constant + noise - kx @ Ci @ kx
        gstd.append(-(J.T @ Ci @ kx) / np.sqrt(var))
    return np.array(gmean), np.array(gcov), np.array(gstd)


def vecchia_log_likelihood(X, y, order, n_neighbors, *, kernel="gaussian", amplitude=1.0, length_scale=1.0, noise=0.0,
                           coef0=1.0):
    """The Vecchia approximation of a GP's log marginal likelihood, with explicit
    matrices: the points taken in ``order``, each conditioned on the ``n_neighbors``
    nearest points before it in that order (Euclidean distance after dividing by the
    length scales; ties to the earlier point), ``y_i | y_N ~ N(b^T y_N, d)`` with ``b =
    C_NN^-1 c_N`` and ``d = c_ii - c_N^T b`` for the covariance ``C = amplitude phi(g0
    r^2) + noise I`` (``g0`` 1/2 for the Gaussian kernel, 1 otherwise, as
    :func:`fastrbf.gaussian_process`).  With ``n_neighbors >= n - 1`` it is the exact
    log marginal likelihood, whatever the order."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    Xs = X / np.broadcast_to(np.asarray(length_scale, dtype=np.float64), (X.shape[1],))
    g0 = 0.5 if kernel == "gaussian" else 1.0
    C = amplitude * gram(Xs, kernel=kernel, gamma=g0, coef0=coef0) + noise * np.eye(X.shape[0])
    order = np.asarray(order)
    total = 0.0
    for t, i in enumerate(order):
        before = order[:t]
        if before.size:
            dist = np.sum((Xs[before] - Xs[i]) ** 2, axis=1)
            N = before[np.lexsort((np.arange(before.size), dist))[:n_neighbors]]
            b = np.linalg.solve(C[np.ix_(N, N)], C[N, i])
            mu, var = b @ y[N], C[i, i] - C[N, i] @ b
        else:
            mu, var = 0.0, C[i, i]
        total += -0.5 * (np.log(2 * np.pi * var) + (y[i] - mu) ** 2 / var)
    return float(total)


def maximin_order(X, first):
    """The maximin ordering of the rows of ``X`` from row ``first``: each next row the
    one farthest (squared Euclidean distance) from the nearest row before it, ties to
    the lower index; ``O(n^2)``."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    dist = np.sum((X - X[first]) ** 2, axis=1)
    taken = np.zeros(n, dtype=bool)
    order = [int(first)]
    taken[first] = True
    for _ in range(n - 1):
        i = int(np.argmax(np.where(taken, -np.inf, dist)))  # argmax: the first of equal maxima
        order.append(i)
        taken[i] = True
        dist = np.minimum(dist, np.sum((X - X[i]) ** 2, axis=1))
    return np.array(order)


def vecchia_predict(X, y, Xq, n_neighbors, *, kernel="gaussian", amplitude=1.0, length_scale=1.0, noise=0.0,
                    coef0=1.0):
    """Mean and variance (noise included) of ``y`` at each row of ``Xq`` given its
    ``n_neighbors`` nearest rows of ``X`` (distances after dividing by the length
    scales, ties to the lower index), with explicit matrices; the covariance as
    :func:`vecchia_log_likelihood`'s."""
    X = np.asarray(X, dtype=np.float64)
    ls = np.broadcast_to(np.asarray(length_scale, dtype=np.float64), (X.shape[1],))
    Xs, Qs = X / ls, np.asarray(Xq, dtype=np.float64) / ls
    g0 = 0.5 if kernel == "gaussian" else 1.0
    mean, var = np.empty(Qs.shape[0]), np.empty(Qs.shape[0])
    for i, q in enumerate(Qs):
        dist = np.sum((Xs - q) ** 2, axis=1)
        N = np.lexsort((np.arange(dist.size), dist))[:n_neighbors]
        C = amplitude * gram(Xs[N], kernel=kernel, gamma=g0, coef0=coef0) + noise * np.eye(N.size)
        k = amplitude * gram(q[None], Xs[N], kernel=kernel, gamma=g0, coef0=coef0)[0]
        mean[i] = k @ np.linalg.solve(C, np.asarray(y, dtype=np.float64)[N])
        prior = amplitude * gram(q[None], kernel=kernel, gamma=g0, coef0=coef0)[0, 0] + noise
        var[i] = prior - k @ np.linalg.solve(C, k)
    return mean, var


def kernel_kmeans(X, labels, n_clusters, *, kernel="gaussian", gamma=1.0, degree=3, coef0=1.0, sample_weight=None,
                  max_iter=300, tol=0.0):
    """Kernel k-means from the initial ``labels`` on the full kernel matrix (float64):
    each iteration the kernel sums ``S = G @ (w * onehot)``, the distances ``k(x, x) -
    2 S / W + T / W**2`` and their argmin (ties: the lowest index); an empty cluster
    takes, in index order, the farthest point (by decreasing distance, ties: the lowest
    index) that is not alone in its cluster; stop when the labels equal those of the
    previous iteration (never at the first) or the squared shift of the means is at
    most ``tol`` times the total variance in feature space.  Returns ``(labels,
    inertia, n_iter)``: the labels of the final means and their weighted squared
    distances."""
    X = np.asarray(X, dtype=np.float64)
    n, K = X.shape[0], n_clusters
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    G = gram(X, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    diag = np.diag(G).copy()

    def state(lab):
        onehot = (lab[:, None] == np.arange(K)[None, :]) * w[:, None]
        S = G @ onehot
        W = onehot.sum(axis=0)
        T = (onehot * S).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            D = np.where(W > 0, T / W**2, 0.0)[None, :] - 2.0 * S / W[None, :]
        D[:, W == 0] = np.inf
        return S, W, T, D

    total = w @ diag / w.sum() - w @ G @ w / w.sum() ** 2
    labels = np.array(labels, dtype=np.int64)
    labels_old = np.full(n, -1)
    strict = False
    n_iter = 0
    for it in range(max_iter):
        S, W, T, D = state(labels)
        new = np.argmin(D, axis=1)
        mind = diag + D[np.arange(n), new]
        Wn = np.bincount(new, weights=w, minlength=K)
        counts = np.bincount(new, minlength=K)
        for e in range(K):
            if Wn[e] != 0:
                continue
            for i in np.argsort(-mind, kind="stable"):
                if counts[new[i]] > 1 and w[i] > 0 and Wn[new[i]] > 0 and mind[i] > -np.inf:
                    Wn[new[i]] -= w[i]
                    counts[new[i]] -= 1
                    new[i], Wn[e], counts[e] = e, w[i], 1
                    mind[i] = -np.inf  # taken
                    break
        cross = np.bincount(new, weights=w * S[np.arange(n), new], minlength=K)
        S2, W2, T2, _ = state(new)
        n_iter = it + 1
        if np.array_equal(new, labels_old):
            strict = True
            labels = new
            break
        both = (W > 0) & (W2 > 0)
        shift = np.sum(T2[both] / W2[both] ** 2 + T[both] / W[both] ** 2 - 2 * cross[both] / (W2[both] * W[both]))
        labels_old = labels = new
        if tol > 0 and shift <= tol * total:
            break
    _, _, _, D = state(labels)
    final = labels if strict else np.argmin(D, axis=1)
    return final, float(w @ (diag + D[np.arange(n), final])), n_iter
