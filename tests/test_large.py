"""Large dense factorisations: n = 16000 (where the threaded LAPACK ``dpotrf`` of SciPy's
OpenBLAS crashes under its SkylakeX kernel) and n = 20000, under OpenBLAS's default kernel
for this CPU (``OPENBLAS_*`` variables removed), in a fresh process.  The solutions are
checked by their residual, computed with the fused ``gram_matvec`` (no second n x n
matrix)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r'''
import numpy as np
import fastrbf

rng = np.random.default_rng(3)

def residual(X, w, y, alpha, gamma):
    Kw = fastrbf.gram_matvec(X, X, w, gamma=gamma) + alpha * w
    return float(np.abs(Kw - y).max() / np.abs(y).max())

# kernel_ridge with the default solver at n = 16000: the Cholesky path
n = 16000
X = rng.random((n, 3))
y = np.sin(6 * X[:, 0]) + X[:, 1] * X[:, 2]
m = fastrbf.kernel_ridge(X, y, gamma=10.0, alpha=1e-2, solver="cholesky")
r1 = residual(X, m.weights[:, 0], y, 1e-2, 10.0)
assert r1 < 1e-10, r1

# cholesky in place at n = 20000, then a solve
n = 20000
X = rng.random((n, 3))
y = rng.standard_normal(n)
K = fastrbf.gram(X, gamma=10.0)
f = fastrbf.cholesky(K, alpha=1e-2, overwrite=True)
del K
w = f.solve(y)
r2 = residual(X, w, y, 1e-2, 10.0)
assert r2 < 1e-10, r2
print("ok", r1, r2)
'''


@pytest.mark.slow
def test_factorisations_at_16000_and_20000_under_the_default_blas_kernel():
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_") and k != "NUMBA_DISABLE_JIT"}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, f"exit {res.returncode}\n" + res.stdout[-2000:] + res.stderr[-4000:]
    assert res.stdout.strip().startswith("ok")
