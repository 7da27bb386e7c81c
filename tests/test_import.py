"""``import fastrbf`` imports no more than it needs: SciPy's submodules load on first use."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _imported(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if line.startswith("import time:")}


def test_import_pulls_no_scipy_submodule_beyond_numba():
    numba_only = _imported("import numba")
    with_fastrbf = _imported("import fastrbf")
    assert "fastrbf" in with_fastrbf
    extra = sorted(m for m in with_fastrbf - numba_only if m.split(".")[0] == "scipy" and m != "scipy")
    assert not extra, f"import fastrbf pulled {extra}"
    for heavy in ("sklearn", "dask", "matplotlib", "threadpoolctl"):
        assert not [m for m in with_fastrbf if m.split(".")[0] == heavy], heavy


def test_lazy_module_stands_in_for_scipy_linalg():
    import scipy.linalg

    from fastrbf import _lazy

    assert _lazy.scipy.linalg.solve is scipy.linalg.solve
    assert _lazy.lapack.dpotrf is scipy.linalg.lapack.dpotrf
    assert _lazy.blas.dsymm is scipy.linalg.blas.dsymm
    assert "imported on first use" in repr(_lazy.lapack)
