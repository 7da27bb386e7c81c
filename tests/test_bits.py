"""Results are the same bits for 1, 2 and 3 threads, whatever BLAS's own thread setting,
under OpenBLAS's default kernel for this CPU and under ``OPENBLAS_CORETYPE=Haswell``.

Each case runs in a fresh process (the BLAS kernel is chosen when the library loads),
with ``NUMBA_NUM_THREADS=3`` so that three threads exist even on a 2-core machine.  The
script calls every public function at sizes that cross the block boundaries, first with
the library's block sizes and then with small ones (blocks are fixed by the shapes, so a
smaller block size only makes more boundaries), and checks that ``n_threads=1, 2, 3``
and a call inside ``fastrbf.threads(1)`` agree bit for bit.  It prints one digest of all
results; two processes that differ only in ``OPENBLAS_NUM_THREADS`` must print the same.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r'''
import hashlib, sys
import numpy as np
import fastrbf
from fastrbf import _dense, _pairwise

rng = np.random.default_rng(5)


def digest(value):
    h = hashlib.sha256()

    def walk(v):
        if isinstance(v, np.ndarray):
            h.update(str((v.dtype, v.shape)).encode()); h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, (tuple, list)):
            for u in v:
                walk(u)
        else:
            h.update(repr(v).encode())
    walk(value)
    return h.hexdigest()


def cases():
    X = rng.standard_normal((530, 5)); Y = rng.standard_normal((370, 5))
    Xh = rng.standard_normal((300, 70)); Yh = rng.standard_normal((260, 70))  # certified GEMM path
    X32, Y32, Xh32 = X.astype(np.float32), Y.astype(np.float32), Xh.astype(np.float32)
    V = rng.standard_normal((370, 3))
    t = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    labels = (t > 0).astype(int)
    K = fastrbf.gram(X, gamma=0.3)
    Xg = rng.standard_normal((120, 3)); yg = np.sin(2 * Xg[:, 0]) + 0.1 * rng.standard_normal(120)
    yield "sqdist", lambda nt: fastrbf.sqdist(X, Y, n_threads=nt)
    yield "sqdist-sym", lambda nt: fastrbf.sqdist(X, n_threads=nt)
    yield "sqdist-gemm", lambda nt: fastrbf.sqdist(Xh, Yh, n_threads=nt)
    yield "sqdist-gemm-sym", lambda nt: fastrbf.sqdist(Xh, n_threads=nt)
    yield "sqdist-gemm-f32", lambda nt: fastrbf.sqdist(Xh32, n_threads=nt)
    yield "sqdist-f32", lambda nt: fastrbf.sqdist(X32, Y32, n_threads=nt)
    yield "gram", lambda nt: fastrbf.gram(X, Y, gamma=0.5, n_threads=nt)
    yield "gram-gemm", lambda nt: fastrbf.gram(Xh, Yh, gamma=0.01, n_threads=nt)
    widths = np.linspace(0.1, 2, 370)
    yield "gram-percentre", lambda nt: fastrbf.gram(X, Y, kernel="inverse_multiquadric", gamma=widths, n_threads=nt)
    yield "gram-polynomial", lambda nt: fastrbf.gram(Xh, Yh, kernel="polynomial", gamma=0.1, n_threads=nt)
    yield "gram-tanh", lambda nt: fastrbf.gram(X, Y, kernel="tanh", gamma=0.1, n_threads=nt)
    yield "gram_matvec", lambda nt: fastrbf.gram_matvec(X, Y, V, gamma=0.5, n_threads=nt)
    yield "lloyd_assign", lambda nt: fastrbf.lloyd_assign(Xh, Yh[:40], n_threads=nt)
    yield "lloyd_update", lambda nt: fastrbf.lloyd_update(X, labels, 2, n_threads=nt)
    yield "kmeans", lambda nt: (lambda r: (r.centers, r.labels, r.inertia, r.n_iter))(
        fastrbf.kmeans(Xh, 12, seed=1, max_iter=5, n_threads=nt))
    yield "cholesky", lambda nt: (lambda f: (f.factor, f.solve(t), f.logdet()))(
        fastrbf.cholesky(K, alpha=1e-3, n_threads=nt))
    Kb = fastrbf.gram(rng.standard_normal((1300, 3)), gamma=2.0)  # above the direct-LAPACK order: blocked
    yield "cholesky-blocked", lambda nt: fastrbf.cholesky(Kb, alpha=1e-3, n_threads=nt).factor
    yield "solve_regularized", lambda nt: fastrbf.solve_regularized(K, np.repeat(V, 2, axis=0)[:530], alpha=1e-2, n_threads=nt)
    yield "kernel_ridge", lambda nt: (lambda m: (m.weights, m.predict(Y, n_threads=nt)))(
        fastrbf.kernel_ridge(X, t, gamma=0.5, alpha=1e-3, n_threads=nt))
    yield "kernel_ridge-pcg", lambda nt: (lambda m: (m.weights, m.n_iter, m.residual))(
        fastrbf.kernel_ridge(X, t, gamma=0.5, alpha=1e-6, solver="nystrom-pcg", n_landmarks=300, max_iter=20,
                             tol=1e-14, seed=0, n_threads=nt))
    yield "interpolate", lambda nt: fastrbf.interpolate(X[:, :2], t, n_threads=nt).predict(Y[:, :2], n_threads=nt)
    yield "interpolate-gaussian", lambda nt: fastrbf.interpolate(X[:, :3], t, kernel="gaussian", gamma=2.0, degree=-1,
                                                                  n_threads=nt).weights
    yield "rbf_network", lambda nt: fastrbf.rbf_network(X, t, n_centers=40, gamma=0.3, seed=0, n_threads=nt).predict(
        Y, n_threads=nt)
    yield "rbf_network-class", lambda nt: fastrbf.rbf_network(X, labels, n_centers=20, gamma=0.3, classify=True, seed=0,
                                                               n_threads=nt).decision_function(Y, n_threads=nt)
    yield "knn", lambda nt: fastrbf.knn(X, Y, 5, n_threads=nt)
    yield "knn_predict", lambda nt: fastrbf.knn_predict(X, t, Y, 5, weights="distance", n_threads=nt)
    yield "nadaraya_watson", lambda nt: fastrbf.nadaraya_watson(X, t, Y, gamma=0.5, n_threads=nt)
    yield "rbf_vote", lambda nt: fastrbf.rbf_vote(X, labels, Y, gamma=0.5, classify=True, n_threads=nt)
    yield "gp_lml", lambda nt: fastrbf.gaussian_process_lml(Xg, yg, kernel="prml", length_scale=0.7, constant=0.1,
                                                           linear=0.1, noise=1e-2, eval_gradient=True, n_threads=nt)
    yield "gp_prml", lambda nt: (lambda m: (m.theta, m.predict(Xg[:7] + 0.1, return_std=True, n_threads=nt)))(
        fastrbf.gaussian_process(Xg, yg, kernel="prml", noise=1e-2, n_restarts=1, seed=0, n_threads=nt))
    yield "random_fourier", lambda nt: fastrbf.random_fourier(5, 300, gamma=0.5, seed=0).transform(X, n_threads=nt)
    yield "random_fourier-pair", lambda nt: fastrbf.random_fourier(5, 300, gamma=0.5, seed=0, kind="cos_sin").transform(
        X32, n_threads=nt)
    yield "nystroem", lambda nt: fastrbf.nystroem(X, 60, gamma=0.5, seed=0, n_threads=nt).transform(Y, n_threads=nt)


def run_all(tag):
    total = hashlib.sha256()
    for name, f in cases():
        ref = digest(f(1))
        for nt in (2, 3):
            got = digest(f(nt))
            assert got == ref, f"{tag}: {name} differs between n_threads=1 and {nt}"
        with fastrbf.threads(1):
            got = digest(f(None))
        assert got == ref, f"{tag}: {name} differs between n_threads=1 and fastrbf.threads(1)"
        with fastrbf.threads(3):
            got = digest(f(None))
        assert got == ref, f"{tag}: {name} differs between n_threads=1 and fastrbf.threads(3)"
        total.update(ref.encode())
    return total.hexdigest()


assert fastrbf._threads.max_threads() == 3
first = run_all("library block sizes")
# small blocks: many more boundaries at the same sizes
_pairwise.GEMM_BLOCK_ELEMENTS = 3000
_dense.NB, _dense.TRSM_ROWS, _dense.SOLVE_COLS, _dense.GEMM_BLOCK, _dense.DIRECT_N = 48, 100, 1, 2000, 0
second = run_all("small block sizes")
print("DIGEST", first, second)
'''


def _run(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_") and k != "NUMBA_DISABLE_JIT"}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_NUM_THREADS"] = "3"
    env.update(env_extra)
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-4000:]
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("DIGEST")]
    assert line, res.stdout[-2000:]
    return line[-1]


@pytest.mark.slow
@pytest.mark.parametrize("coretype", [None, "Haswell"], ids=["default-kernel", "haswell-kernel"])
def test_same_bits_for_any_thread_count_and_blas_setting(coretype):
    base = {} if coretype is None else {"OPENBLAS_CORETYPE": coretype}
    one = _run({**base, "OPENBLAS_NUM_THREADS": "1"})
    three = _run({**base, "OPENBLAS_NUM_THREADS": "3"})
    assert one == three  # BLAS's own thread setting does not matter either
