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


def test_families_load_on_first_use():
    # `import fastrbf` loads no family module (nor their numba dispatchers); the first use
    # of a name loads its family; every public name resolves; submodules as attributes
    code = ("import sys, fastrbf; print(sorted(m for m in sys.modules if m.startswith('fastrbf.'))); "
            "fastrbf.sqdist; print('fastrbf.distances' in sys.modules, 'fastrbf.gp' in sys.modules); "
            "ns = {}; exec('from fastrbf import *', ns); print(sorted(set(fastrbf.__all__) - set(ns))); "
            "print(fastrbf.approx.__name__, 'gram' in dir(fastrbf))")
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    loaded, first_use, missing, last = res.stdout.splitlines()
    assert not [m for m in eval(loaded) if m.split(".")[1] in ("approx", "cluster", "distances", "gp", "kernels",
                                                               "linalg", "models", "neighbors", "_jit")], loaded
    assert first_use == "True False"
    assert missing == "[]"
    assert last == "fastrbf.approx True"
