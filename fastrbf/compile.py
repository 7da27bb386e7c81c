"""Compile fastrbf's numba kernels ahead of time: ``python -m fastrbf.compile``.

Every public function compiles its kernels on its first call for a dtype and keeps
them in numba's on-disk cache.  ``TARGETS`` names, for every public function (and the
solver variants that run other kernels), one tiny call that makes it compile; the
command-line tool runs them to fill the cache before first use.

Examples
--------
>>> import numpy as np
>>> from fastrbf.compile import TARGETS
>>> TARGETS["sqdist"](np.float64)
>>> sorted(TARGETS)[:3]
['cholesky', 'gp_log_marginal_likelihood', 'gp_regression']
"""

import warnings

import numpy as np


def _data(dtype, n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)).astype(dtype)
    y = (np.sin(3 * X[:, 0]) + X[:, 1]).astype(dtype)
    return X, y


def _sqdist(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.sqdist(X, X[:7])


def _gram(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.gram(X, X[:7], gamma=2.0)


def _gram_matvec(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.gram_matvec(X, X[:7], y[:7], gamma=2.0)


def _cholesky(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.cholesky(fastrbf.gram(X, gamma=2.0), alpha=1e-3).solve(y)


def _solve_regularized(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.solve_regularized(fastrbf.gram(X, gamma=2.0), y, alpha=1e-3)


def _kernel_ridge(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3).predict(X[:5])


def _kernel_ridge_pcg(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.kernel_ridge(X, y, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=10, seed=0).predict(X[:5])


def _interpolate(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.interpolate(X, y).predict(X[:5])


def _rbf_network(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_network(X, y, gamma=2.0, n_centers=5, seed=0).predict(X[:5])


def _rbf_network_learn_gamma(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_network(X, y, gamma=2.0, n_centers=5, seed=0, learn_gamma=True, max_gamma_iter=3).predict(X[:5])


def _kmeans(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.kmeans(X, 4, seed=0, max_iter=5)


def _lloyd_assign(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.lloyd_assign(X, X[:4])


def _lloyd_update(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.lloyd_update(X, np.arange(len(X)) % 4, 4)


def _knn(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.knn(X, X[:5], 3)


def _knn_predict(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.knn_predict(X, y, X[:5], 3)


def _nadaraya_watson(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.nadaraya_watson(X, y, X[:5], gamma=2.0)


def _rbf_vote(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.rbf_vote(X, y > y.mean(), X[:5], gamma=2.0, classify=True)


def _random_fourier(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.random_fourier(3, 16, gamma=2.0, seed=0, dtype=dtype).transform(X)


def _nystroem(dtype):
    import fastrbf

    X, _ = _data(dtype)
    fastrbf.nystroem(X, 8, gamma=2.0, seed=0).transform(X)


def _gp_log_marginal_likelihood(dtype):
    import fastrbf

    X, y = _data(dtype)
    fastrbf.gp_log_marginal_likelihood(X, y, [1.0, 2.0, 0.1, 0.1], noise=0.1)


def _gp_regression(dtype):
    import fastrbf

    X, y = _data(dtype)
    with warnings.catch_warnings():  # the optimum of this tiny problem may sit on a bound
        warnings.simplefilter("ignore", UserWarning)
        fastrbf.gp_regression(X, y, n_restarts=0, seed=0).predict(X[:5], return_var=True)


#: one tiny call per public function (and solver variant): name -> callable(dtype)
TARGETS = {
    "cholesky": _cholesky,
    "gp_log_marginal_likelihood": _gp_log_marginal_likelihood,
    "gp_regression": _gp_regression,
    "gram": _gram,
    "gram_matvec": _gram_matvec,
    "interpolate": _interpolate,
    "kernel_ridge": _kernel_ridge,
    "kernel_ridge[nystrom-pcg]": _kernel_ridge_pcg,
    "kmeans": _kmeans,
    "knn": _knn,
    "knn_predict": _knn_predict,
    "lloyd_assign": _lloyd_assign,
    "lloyd_update": _lloyd_update,
    "nadaraya_watson": _nadaraya_watson,
    "nystroem": _nystroem,
    "random_fourier": _random_fourier,
    "rbf_network": _rbf_network,
    "rbf_network[learn_gamma]": _rbf_network_learn_gamma,
    "rbf_vote": _rbf_vote,
    "solve_regularized": _solve_regularized,
    "sqdist": _sqdist,
}
