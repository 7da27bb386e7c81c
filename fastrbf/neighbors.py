"""Nearest neighbours and kernel smoothing: k-NN, the seeds' RBF vote and the
Nadaraya-Watson kernel regression, all fused (tiles of distances are consumed in
cache; memory O((n + m) d + m k), never an m x n matrix).

Decisions:

- ``knn`` keeps, per query, a sorted list of the k best while it scans the training
  points in index order; a later point replaces a kept one only when strictly nearer,
  so ties go to the lowest index (``np.argsort(kind="stable")`` on the exact distances).
  Distances are direct differences (the ``sqdist`` arithmetic: exact to a few ulp).
- ``nadaraya_watson`` and the classifying ``rbf_vote`` compute the kernel weights
  relative to the nearest training point, ``w_j = k(x, x_j) / k(x, x_nearest)``
  (``exp(-gamma (d_j^2 - d_min^2))``): the ratio (Nadaraya-Watson) and the sign or
  argmax (the vote) are unchanged, and the weights can never all underflow.  When the
  plain weights would all be 0 (a query far from every training point, or a huge
  ``gamma``), the result is therefore the proper limit: the nearest neighbour's value
  (the mean over exactly tied nearest points) - the seeds' nearest-neighbour limit of a
  narrow Gaussian.
- ``rbf_vote`` for regression is the unnormalised sum ``sum_m y_m exp(-gamma ||x -
  x_m||^2)`` (through ``gram_matvec``), which may underflow to 0 legitimately.
"""

import numpy as np

from . import _threads
from . import _validation as _v
from ._jit import neighbors as _jn
from ._typing import ArrayLike, FloatArray, IntArray, Threads
from .kernels import gram_matvec


def _check_k(k, n):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"`k` must be an int in [1, n_samples] = [1, {n}]; got {k!r}.")
    return int(k)


def _prepare(X, Xq):
    Xa = _v.check_data(X, "X")
    Qa = _v.check_data(Xq, "Xq")
    _v.check_features(Xa, Qa, "X", "Xq")
    dtype = _v.result_dtype(Xa, Qa)
    return _v.to_dtype(Xa, dtype), _v.to_dtype(Qa, dtype), dtype


def knn(X: ArrayLike, Xq: ArrayLike, k: int, *, n_threads: Threads = None) -> tuple[IntArray, FloatArray]:
    """The ``k`` nearest training points of each query point.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Training points.
    Xq : array_like of shape (m, d)
        Query points.
    k : int
        1 <= k <= n.
    n_threads : int, optional

    Returns
    -------
    indices : ndarray of shape (m, k), int64
        Ascending distance; ties to the lowest index.
    sqdist : ndarray of shape (m, k)
        The squared distances (dtype of the inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import knn
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> idx, d2 = knn(X, [[1.4], [2.5]], 2)
    >>> idx
    array([[1, 2],
           [2, 3]])
    >>> d2.round(2)
    array([[0.16, 0.36],
           [0.25, 0.25]])
    """
    Xc, Qc, dtype = _prepare(X, Xq)
    k = _check_k(k, Xc.shape[0])
    m = Qc.shape[0]
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=dtype)
    Xt = np.ascontiguousarray(Xc.T)
    _threads.run(_jn.knn_rows, n_threads, Qc, Xt, k, idx, dist)
    return idx, dist


def _targets(Y, n, classify):
    """(float64 targets (n, t), None, single output?) for regression, or (class codes,
    classes, True)."""
    if classify:
        classes, codes = _v.check_class_labels(Y, n)
        return codes, classes, True
    Ya = _v.check_targets(Y, n)
    single = Ya.ndim == 1
    return np.ascontiguousarray(Ya.reshape(n, -1), dtype=np.float64), None, single


def knn_predict(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, k: int, *, weights: str = "uniform", classify: bool = False,
                n_threads: Threads = None) -> np.ndarray:
    """k-nearest-neighbour regression (mean) or classification (majority vote).

    As scikit-learn's ``KNeighborsRegressor``/``KNeighborsClassifier`` with the brute
    force algorithm: ``weights="distance"`` weighs by 1 / Euclidean distance (a query
    that coincides with training points takes their values only); votes tie to the
    smallest label.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
        Targets, or class labels (any values) with ``classify=True``.
    Xq : array_like of shape (m, d)
    k : int
    weights : {"uniform", "distance"}
    classify : bool, default False
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (m,) or (m, t)
        Predictions (float64, or float32 when every input is float32), or labels.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import knn_predict
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> knn_predict(X, [0.0, 10.0, 20.0, 30.0], [[1.4]], 2)
    array([15.])
    >>> knn_predict(X, ["a", "a", "b", "b"], [[0.2], [2.9]], 3, classify=True)
    array(['a', 'b'], dtype='<U1')
    """
    if weights not in ("uniform", "distance"):
        raise ValueError(f'`weights` must be "uniform" or "distance"; got {weights!r}.')
    Xa = _v.check_data(X, "X")
    T, classes, single = _targets(Y, Xa.shape[0], classify)
    idx, d2 = knn(X, Xq, k, n_threads=n_threads)
    m = idx.shape[0]
    if weights == "uniform":
        w = np.ones(idx.shape)
    else:
        with np.errstate(divide="ignore"):
            w = 1.0 / np.sqrt(d2.astype(np.float64))
        inf = np.isinf(w)
        hit = inf.any(axis=1)
        w[hit] = inf[hit].astype(np.float64)
    if classify:
        votes = np.zeros((m, classes.shape[0]))
        np.add.at(votes, (np.repeat(np.arange(m), idx.shape[1]), T[idx].ravel()), w.ravel())
        return classes[np.argmax(votes, axis=1)]
    out = np.einsum("mk,mkt->mt", w, T[idx]) / w.sum(axis=1, keepdims=True)
    dtype = np.dtype(np.float32) if d2.dtype == np.float32 and np.asarray(Y).dtype == np.float32 else np.dtype(np.float64)
    out = out.astype(dtype, copy=False)
    return out[:, 0] if single else out


_NW_KERNELS = ("gaussian", "laplacian")


def _shifted(X, T, Xq, gamma, kernel, n_threads):
    if kernel not in _NW_KERNELS:
        raise ValueError(f"`kernel` must be one of {list(_NW_KERNELS)}; got {kernel!r}.")
    Xc, Qc, dtype = _prepare(X, Xq)
    if np.ndim(gamma) != 0:
        raise TypeError(f"`gamma` must be a number here; got {gamma!r}.")
    g, _ = _v.check_gamma(gamma, 1, dtype)
    m = Qc.shape[0]
    num = np.empty((m, T.shape[1]))
    den = np.empty(m)
    dmin = np.empty(m, dtype=dtype)
    Xt = np.ascontiguousarray(Xc.T)
    Tt = np.ascontiguousarray(T.T, dtype=np.float64)
    _threads.run(_jn.shifted_sums, n_threads, Qc, Xt, Tt, g[0], kernel == "laplacian", num, den, dmin)
    return num, den, dtype


def nadaraya_watson(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, kernel: str = "gaussian",
                    n_threads: Threads = None) -> FloatArray:
    """Nadaraya-Watson kernel regression ``sum_n k(x, x_n) y_n / sum_n k(x, x_n)``.

    Fused, and safe when every kernel weight underflows: the weights are taken relative
    to the nearest training point, so far from the data (or for a huge ``gamma``) the
    prediction is the nearest neighbour's value (the mean over exact ties), the limit of
    the formula.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
    Xq : array_like of shape (m, d)
    gamma : float
        > 0; the kernel is ``exp(-gamma r^2)`` (gaussian) or ``exp(-sqrt(gamma) r)``
        (laplacian).
    kernel : {"gaussian", "laplacian"}
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (m,) or (m, t)

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import nadaraya_watson
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> nadaraya_watson(X, [0.0, 1.0, 4.0], [[1.0], [50.0]], gamma=2.0).round(3)  # far away: the nearest value
    array([1.213, 4.   ])
    """
    Xa = _v.check_data(X, "X")
    T, _, single = _targets(Y, Xa.shape[0], False)
    num, den, dtype = _shifted(Xa, T, Xq, gamma, kernel, n_threads)
    out = num / den[:, None]
    out_dtype = np.dtype(np.float32) if dtype == np.float32 and np.asarray(Y).dtype == np.float32 else np.dtype(np.float64)
    out = out.astype(out_dtype, copy=False)
    return out[:, 0] if single else out


def rbf_vote(X: ArrayLike, Y: ArrayLike, Xq: ArrayLike, *, gamma: float, classify: bool = False,
             n_threads: Threads = None) -> np.ndarray:
    """The seeds' full RBF network with uniform influence: every training point votes
    with ``exp(-gamma ||x - x_m||^2)``.

    Regression: the unnormalised sum ``sum_m y_m exp(-gamma ||x - x_m||^2)``.
    Classification: two classes -> the sign of the sum of +-1 votes (positive: the
    second class, as ``np.unique`` orders them); more -> the class with the largest
    one-vs-rest sum.  The vote is computed relative to the nearest training point (a
    positive common factor), so it never underflows: for a huge ``gamma`` it is the
    1-nearest-neighbour prediction.

    Parameters
    ----------
    X : array_like of shape (n, d)
    Y : array_like of shape (n,) or (n, t)
        Targets, or class labels with ``classify=True``.
    Xq : array_like of shape (m, d)
    gamma : float
    classify : bool, default False
    n_threads : int, optional

    Returns
    -------
    ndarray of shape (m,) or (m, t), or labels of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbf import rbf_vote
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> rbf_vote(X, [1, 1, -1], [[0.5], [2.9]], gamma=1.0, classify=True)
    array([ 1, -1])
    >>> rbf_vote(X, [1.0, 1.0, -1.0], [[0.5]], gamma=1.0).round(4)
    array([1.5557])
    """
    Xa = _v.check_data(X, "X")
    T, classes, single = _targets(Y, Xa.shape[0], classify)
    if not classify:
        out = gram_matvec(Xq, Xa, T, gamma=gamma, n_threads=n_threads)
        both32 = out.dtype == np.float32 and np.asarray(Y).dtype == np.float32
        out_dtype = np.dtype(np.float32) if both32 else np.dtype(np.float64)
        out = out.astype(out_dtype, copy=False)
        return out[:, 0] if single else out
    if classes.shape[0] < 2:
        raise ValueError(f"`Y` must have at least 2 classes with `classify=True`; got {classes.shape[0]}.")
    if classes.shape[0] == 2:
        V = np.where(T == 1, 1.0, -1.0)[:, None]
    else:
        V = -np.ones((T.shape[0], classes.shape[0]))
        V[np.arange(T.shape[0]), T] = 1.0
    num, _, _ = _shifted(Xa, V, Xq, gamma, "gaussian", n_threads)
    if classes.shape[0] == 2:
        return classes[(num[:, 0] > 0).astype(np.int64)]
    return classes[np.argmax(num, axis=1)]
