"""Record the outputs of every public function, then check that a changed tree gives the same bits.

A refactoring tool, not a test: the bits depend on the machine (vector width, BLAS kernel), so
the record is made and checked on the same machine, before and after a change::

    git worktree add /tmp/before HEAD            # the tree before the change
    PYTHONPATH=/tmp/before python tests/golden.py record /tmp/golden.pkl
    python tests/golden.py compare /tmp/golden.pkl  # the working tree

Every case runs with float64 and float32 inputs and with 1 and 2 threads.  A case that raises
records the exception's type and message, so an error that changes is a difference too.
Deprecation warnings are ignored (a wrapper may warn where the old function did not).
"""

import hashlib
import pickle
import sys
import warnings

import numpy as np


def _flatten(value, out):
    """Arrays, numbers and strings of a result, in a fixed order."""
    if isinstance(value, np.ndarray):
        out.append(value.copy())
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for k in sorted(value):
            out.append(repr(k))
            _flatten(value[k], out)
    elif isinstance(value, (np.generic, float, int, bool, str, type(None))):
        out.append(value.item() if isinstance(value, np.generic) else value)
    elif hasattr(value, "compute"):  # a dask array
        _flatten(np.asarray(value.compute(scheduler="synchronous")), out)
    else:
        out.append(type(value).__name__)
    return out


def cases(dtype):
    from user_kernel_defs import matern52_user  # tests/ is on sys.path (main)

    import fastrbf
    import fastrbf.sklearn as fsk

    rng = np.random.default_rng(11)

    def a(*shape):
        return rng.standard_normal(shape).astype(dtype)

    X, Y, V = a(530, 5), a(370, 5), a(370, 3)
    Xh, Yh = a(300, 70), a(260, 70)
    t = (np.sin(X[:, 0]) + X[:, 1] * X[:, 2]).astype(dtype)
    labels = (t > 0).astype(np.int64)
    K = fastrbf.gram(X, gamma=0.3)
    Kb = fastrbf.gram(a(1300, 3), gamma=2.0)
    Xg = a(120, 3)
    yg = (np.sin(2 * Xg[:, 0]) + 0.1 * rng.standard_normal(120)).astype(dtype)
    X2 = a(400, 2)
    t2 = (np.cos(3 * X2[:, 0]) * X2[:, 1]).astype(dtype)
    Xs = a(2000, 2)
    ys = np.sin(Xs[:, 0] * 2).astype(dtype)
    Xc = np.concatenate([a(200, 4) + 4, a(200, 4) - 4, a(150, 4)])
    Xl = a(20000, 16)  # large enough for the bounded and compiled k-means paths

    def model_out(m, Q, nt):
        return m.predict(Q, n_threads=nt)

    yield "sqdist", lambda nt: fastrbf.sqdist(X, Y, n_threads=nt)
    yield "sqdist-sym", lambda nt: fastrbf.sqdist(X, n_threads=nt)
    yield "sqdist-gemm", lambda nt: fastrbf.sqdist(Xh, Yh, n_threads=nt)
    yield "sqdist-ls", lambda nt: fastrbf.sqdist(X, Y, length_scale=np.linspace(0.5, 2, 5), n_threads=nt)
    yield "sqdist-out", lambda nt: fastrbf.sqdist(X, Y, out=np.empty((530, 370), dtype), n_threads=nt)
    for name in sorted(fastrbf.KERNELS):
        yield f"gram-{name}", lambda nt, name=name: fastrbf.gram(X, Y, kernel=name, gamma=0.2, n_threads=nt)
    yield "gram-gemm", lambda nt: fastrbf.gram(Xh, Yh, gamma=0.01, n_threads=nt)
    yield "gram-percentre", lambda nt: fastrbf.gram(X, Y, kernel="inverse_multiquadric", gamma=np.linspace(0.1, 2, 370),
                                                     n_threads=nt)
    yield "gram-sym", lambda nt: fastrbf.gram(X, gamma=0.5, n_threads=nt)
    yield "gram_matvec", lambda nt: fastrbf.gram_matvec(X, Y, V, gamma=0.5, n_threads=nt)
    yield "gram_matvec-laplacian", lambda nt: fastrbf.gram_matvec(X, Y, V, kernel="laplacian", gamma=0.5, n_threads=nt)
    yield "lloyd_assign", lambda nt: fastrbf.lloyd_assign(Xh, Yh[:40], n_threads=nt)
    yield "lloyd_assign-lowd", lambda nt: fastrbf.lloyd_assign(X, Y[:17], n_threads=nt)
    yield "lloyd_update", lambda nt: fastrbf.lloyd_update(X, labels, 2, n_threads=nt)
    yield "kmeans_plusplus", lambda nt: fastrbf.kmeans_plusplus(X, 9, seed=3, n_threads=nt)

    def km(Xk, k, **kw):
        return lambda nt: (lambda r: (r.centers, r.labels, r.inertia, r.n_iter))(
            fastrbf.kmeans(Xk, k, seed=1, n_threads=nt, **kw))

    yield "kmeans", km(Xh, 12, max_iter=5)
    yield "kmeans-lowd", km(X, 7)
    yield "kmeans-clusters", km(Xc, 3, n_init=2)
    for alg in ("lloyd", "bounded", "auto"):
        yield f"kmeans-large-{alg}", km(Xl, 64, algorithm=alg, max_iter=15)
    yield "kmeans-large-k256", km(Xl[:8000], 256, max_iter=6)
    yield "kmeans-sparse", lambda nt: _sparse_kmeans(fastrbf, Xc, nt)
    yield "cholesky", lambda nt: (lambda f: (f.factor, f.solve(t), f.logdet()))(fastrbf.cholesky(K, alpha=1e-3, n_threads=nt))
    yield "cholesky-blocked", lambda nt: fastrbf.cholesky(Kb, alpha=1e-3, n_threads=nt).factor
    yield "solve_regularized", lambda nt: fastrbf.solve_regularized(K, np.repeat(V, 2, axis=0)[:530], alpha=1e-2,
                                                                   n_threads=nt)
    yield "kernel_ridge", lambda nt: (lambda m: (m.weights, model_out(m, Y, nt)))(
        fastrbf.kernel_ridge(X, t, gamma=0.5, alpha=1e-3, n_threads=nt))
    yield "kernel_ridge-grad", lambda nt: fastrbf.kernel_ridge(X, t, gamma=0.5, alpha=1e-3, n_threads=nt).predict(
        Y, return_grad=True, n_threads=nt)
    yield "kernel_ridge-pcg", lambda nt: (lambda m: (m.weights, m.n_iter, m.residual))(
        fastrbf.kernel_ridge(X, t, gamma=0.5, alpha=1e-6, solver="nystrom-pcg", n_landmarks=300, max_iter=20,
                             tol=1e-14, seed=0, n_threads=nt))
    yield "kernel_ridge_cv", lambda nt: (lambda r: _flatten(vars(r) if hasattr(r, "__dict__") else r, []))(
        fastrbf.kernel_ridge_cv(X, t, gamma=[0.1, 0.5], alpha=[1e-3, 1e-1], n_threads=nt))
    yield "interpolate", lambda nt: fastrbf.interpolate(X2, t2, n_threads=nt).predict(Y[:, :2], n_threads=nt)
    yield "interpolate-gaussian", lambda nt: fastrbf.interpolate(X[:, :3], t, kernel="gaussian", gamma=2.0, degree=-1,
                                                                  n_threads=nt).weights
    yield "interpolate-local", lambda nt: fastrbf.interpolate(Xs, ys, neighbors=20, n_threads=nt).predict(
        Y[:, :2], n_threads=nt)
    yield "interpolate-pu", lambda nt: fastrbf.interpolate(Xs, ys, method="pu", n_threads=nt).predict(Y[:, :2], n_threads=nt)
    yield "partition_of_unity", lambda nt: fastrbf.partition_of_unity(Xs, ys, patch_points=60, n_threads=nt).predict(
        Y[:, :2], n_threads=nt)
    yield "interpolate_cv", lambda nt: (lambda r: _flatten(vars(r) if hasattr(r, "__dict__") else r, []))(
        fastrbf.interpolate_cv(X2[:200], t2[:200], kernel="gaussian", gamma=[0.5, 2.0], alpha=[1e-3, 1e-1], n_threads=nt))
    yield "rbf_network", lambda nt: fastrbf.rbf_network(X, t, n_centers=40, gamma=0.3, seed=0, n_threads=nt).predict(
        Y, n_threads=nt)
    yield "rbf_network-class", lambda nt: fastrbf.rbf_network(X, labels, n_centers=20, gamma=0.3, classify=True, seed=0,
                                                               n_threads=nt).decision_function(Y, n_threads=nt)
    yield "rbf_network-forward", lambda nt: fastrbf.rbf_network(X, t, n_centers=15, centers="forward", gamma=0.3,
                                                                 n_threads=nt).predict(Y, n_threads=nt)
    yield "rbf_network-learn", lambda nt: (lambda m: (m.gamma, m.predict(Y, n_threads=nt)))(
        fastrbf.rbf_network(X, t, n_centers=20, gamma=0.3, learn_gamma=True, seed=0, max_gamma_iter=5, n_threads=nt))
    yield "knn", lambda nt: fastrbf.knn(X, Y, 5, n_threads=nt)
    yield "knn-tree", lambda nt: fastrbf.knn(Xs, Y[:, :2], 8, method="tree", n_threads=nt)
    yield "radius_neighbors", lambda nt: fastrbf.radius_neighbors(Xs, Y[:50, :2], 0.3, n_threads=nt)
    yield "knn_predict", lambda nt: fastrbf.knn_predict(X, t, Y, 5, weights="distance", n_threads=nt)
    yield "nadaraya_watson", lambda nt: fastrbf.nadaraya_watson(X, t, Y, gamma=0.5, n_threads=nt)
    yield "nadaraya_watson-grad", lambda nt: fastrbf.nadaraya_watson(X, t, Y, gamma=0.5, return_grad=True, n_threads=nt)
    yield "rbf_vote", lambda nt: fastrbf.rbf_vote(X, labels, Y, gamma=0.5, classify=True, n_threads=nt)
    yield "gp_lml", lambda nt: fastrbf.gp_log_marginal_likelihood(Xg, yg, [1.0, 2.0, 0.1, 0.1], noise=1e-2, n_threads=nt)
    yield "gp_regression", lambda nt: (lambda m: (m.theta, m.noise, m.predict(Xg[:7] + 0.1, return_var=True, n_threads=nt)))(
        fastrbf.gp_regression(Xg, yg, n_restarts=1, seed=0, n_threads=nt))
    yield "gaussian_process", lambda nt: (lambda m: (m.amplitude, m.length_scale, m.noise,
                                                     m.predict(Xg[:7] + 0.1, return_std=True, n_threads=nt),
                                                     m.predict(Xg[:7] + 0.1, return_cov=True, n_threads=nt),
                                                     m.sample_y(Xg[:5], 2, seed=0)))(
        fastrbf.gaussian_process(Xg, yg, kernel="gaussian", n_threads=nt))
    yield "gaussian_process-grad-std", lambda nt: fastrbf.gaussian_process(
        Xg, yg, kernel="matern52", noise=1e-2, optimize=False).predict(Xg[:7] + 0.1, return_std=True, return_grad=True,
                                                                       n_threads=nt)
    yield "gaussian_process-ard", lambda nt: (lambda m: (m.length_scale, m.predict(Xg[:7] + 0.1, n_threads=nt)))(
        fastrbf.gaussian_process(Xg, yg, kernel="matern32", ard=True, n_threads=nt))
    yield "gaussian_process_lml", lambda nt: fastrbf.gaussian_process_lml(Xg, yg, kernel="matern52", length_scale=0.7,
                                                                           noise=1e-2, eval_gradient=True, n_threads=nt)
    yield "sparse_gaussian_process", lambda nt: (lambda m: (m.length_scale, m.noise,
                                                            m.predict(Xs[:7] + 0.1, return_std=True, n_threads=nt)))(
        fastrbf.sparse_gaussian_process(Xs, ys, n_landmarks=40, seed=0, max_iter=10, n_threads=nt))
    yield "sparse_gaussian_process_lml", lambda nt: fastrbf.sparse_gaussian_process_lml(
        Xs, ys, n_landmarks=40, seed=0, eval_gradient=True, n_threads=nt)
    yield "random_fourier", lambda nt: fastrbf.random_fourier(5, 300, gamma=0.5, seed=0, dtype=dtype).transform(
        X, n_threads=nt)
    yield "random_fourier-pair", lambda nt: fastrbf.random_fourier(5, 300, gamma=0.5, seed=0, kind="cos_sin",
                                                                    dtype=dtype).transform(X, n_threads=nt)
    yield "rpcholesky", lambda nt: (lambda p: (p.pivots, p.factor, p.residual))(
        fastrbf.rpcholesky(X, 40, gamma=0.5, seed=0, n_threads=nt))
    yield "kernel_ridge-rpcholesky", lambda nt: fastrbf.kernel_ridge(
        X, t, gamma=0.5, alpha=1e-2, solver="nystrom", n_landmarks=30, landmarks="rpcholesky", seed=0,
        n_threads=nt).predict(Y, n_threads=nt)
    yield "nystroem", lambda nt: fastrbf.nystroem(X, 60, gamma=0.5, seed=0, n_threads=nt).transform(Y, n_threads=nt)
    yield "nystroem-given", lambda nt: fastrbf.nystroem(X, Y[:30], gamma=0.5, n_threads=nt).transform(Y, n_threads=nt)
    yield "user_kernel", lambda nt: fastrbf.gram(X, Y, kernel=matern52_user, gamma=0.5, n_threads=nt)

    # the scikit-learn front end (its threads set by fastrbf.threads)
    def sk(make, fit, out):
        def f(nt):
            with fastrbf.threads(nt):
                return out(fit(make()))
        return f

    yield "sk-KMeans", sk(lambda: fsk.KMeans(5, random_state=0), lambda e: e.fit(X),
                          lambda e: (e.cluster_centers_, e.labels_, e.transform(Y)))
    yield "sk-KernelRidge", sk(lambda: fsk.KernelRidge(alpha=1e-2, gamma=0.5), lambda e: e.fit(X, t), lambda e: e.predict(Y))
    yield "sk-KernelRidgeCV", sk(lambda: fsk.KernelRidgeCV(gammas=[0.1, 0.5], alphas=[1e-3, 1e-1]), lambda e: e.fit(X, t),
                                 lambda e: e.predict(Y))
    yield "sk-RBFNetworkRegressor", sk(lambda: fsk.RBFNetworkRegressor(n_centers=20, gamma=0.3, random_state=0),
                                       lambda e: e.fit(X, t), lambda e: e.predict(Y))
    yield "sk-RBFNetworkClassifier", sk(lambda: fsk.RBFNetworkClassifier(n_centers=20, gamma=0.3, random_state=0),
                                        lambda e: e.fit(X, labels), lambda e: e.decision_function(Y))
    yield "sk-RBFInterpolatorRegressor", sk(fsk.RBFInterpolatorRegressor, lambda e: e.fit(X2, t2),
                                            lambda e: e.predict(Y[:, :2]))
    yield "sk-RandomFourierFeatures", sk(lambda: fsk.RandomFourierFeatures(gamma=0.5, n_components=50, random_state=0),
                                         lambda e: e.fit(X), lambda e: e.transform(Y))
    yield "sk-Nystroem", sk(lambda: fsk.Nystroem(gamma=0.5, n_components=50, random_state=0), lambda e: e.fit(X),
                            lambda e: e.transform(Y))
    yield "sk-GaussianProcessRegressor", sk(fsk.GaussianProcessRegressor, lambda e: e.fit(Xg, yg),
                                            lambda e: e.predict(Xg[:7] + 0.1, return_std=True))
    yield "sk-GaussianProcessRegressor-skkernel", sk(lambda: fsk.GaussianProcessRegressor(kernel=_sk_kernel()),
                                                     lambda e: e.fit(Xg, yg),
                                                     lambda e: (e.predict(Xg[:7] + 0.1, return_std=True),
                                                                e.log_marginal_likelihood_value_))
    yield "dask", lambda nt: _dask(fastrbf, X, Y, t, nt)


def _sparse_kmeans(fastrbf, Xc, nt):
    import scipy.sparse as sp

    S = sp.csr_matrix(np.where(np.abs(Xc) > 0.8, Xc, 0))
    r = fastrbf.kmeans(S, 3, seed=0, n_threads=nt)
    return r.centers, r.labels, r.inertia, r.n_iter


def _sk_kernel():
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    return ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(1e-2)


def _dask(fastrbf, X, Y, t, nt):
    import dask.array as da

    import fastrbf.dask as fd

    dX = da.from_array(X, chunks=200)
    out = [fd.sqdist(dX, Y, n_threads=nt), fd.gram(dX, Y, gamma=0.5, n_threads=nt),
           fd.gram_matvec(dX, Y, np.ones((len(Y), 2), X.dtype), gamma=0.5, n_threads=nt)]
    r = fd.kmeans(dX, 4, seed=0, n_threads=nt)
    out += [r.centers, r.labels, r.inertia]
    out += [fd.knn(dX, Y, 3, n_threads=nt)]
    m = fd.kernel_ridge(dX, da.from_array(t, chunks=200), gamma=0.5, alpha=1e-2, n_threads=nt)
    out += [m.weights, fd.predict(m, da.from_array(Y, chunks=150), n_threads=nt)]
    return out


def run():
    """name/dtype/threads -> flattened results (or the exception raised)."""
    import dask

    dask.config.set(scheduler="synchronous")
    results = {}
    for dtype in (np.float64, np.float32):
        for name, f in cases(dtype):
            for nt in (1, 2):
                key = f"{name}|{np.dtype(dtype).name}|{nt}"
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        results[key] = _flatten(f(nt), [])
                except Exception as exc:  # an error is an outcome to keep the same
                    results[key] = [f"raised {type(exc).__name__}: {exc}"]
    return results


def _same(a, b):
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float) and isinstance(b, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return type(a) is type(b) and a == b


def _digest(values):
    return hashlib.sha256(pickle.dumps(values)).hexdigest()[:12]


def main(argv):
    import os

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    mode, path = argv[1], argv[2]
    got = run()
    if mode == "record":
        with open(path, "wb") as fh:
            pickle.dump(got, fh)
        raised = sum(1 for v in got.values() if isinstance(v[0], str) and v[0].startswith("raised"))
        print(f"recorded {len(got)} results ({raised} raised) to {path}")
        return 0
    with open(path, "rb") as fh:
        want = pickle.load(fh)
    bad = []
    for key in sorted(set(want) | set(got)):
        w, g = want.get(key), got.get(key)
        if w is None or g is None or len(w) != len(g) or not all(_same(x, y) for x, y in zip(w, g, strict=True)):
            bad.append(key)
            print("DIFFERS", key, (w or ["missing"])[0] if w and isinstance(w[0], str) else "",
                  (g or ["missing"])[0] if g and isinstance(g[0], str) else "")
    print(f"{len(want)} recorded, {len(got)} now, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
