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
    r = np.sqrt(s) if name not in ("polynomial", "tanh") else None
    if name == "laplacian":
        return np.exp(-r)
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
    """The lectures' loop: assign, update, until no label changes."""
    X = np.asarray(X, dtype=np.float64)
    centers = np.array(centers, dtype=np.float64)
    labels = None
    for it in range(max_iter):
        new_labels, _ = lloyd_assign(X, centers)
        if labels is not None and np.array_equal(new_labels, labels):
            break
        labels = new_labels
        new_centers, counts = lloyd_update(X, labels, centers.shape[0])
        centers = np.where(counts[:, None] > 0, new_centers, centers)
    labels, d2 = lloyd_assign(X, centers)
    return centers, labels, float(d2.sum())
