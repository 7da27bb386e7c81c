"""scikit-learn's own tests of ``KernelRidge``, run on :class:`fastrbf.sklearn.KernelRidge`.

scikit-learn's ``sklearn/tests/test_kernel_ridge.py`` (as installed) is loaded as a
module of its own with its ``KernelRidge`` replaced by fastrbf's, the way a user switches
by an import; its test functions run here.  A test that fails marks a deliberate
difference, listed in ``docs/api.md`` ("Coming from scikit-learn and SciPy") and in
:data:`DIFFERENCES`, by which ``conftest.py`` marks it an expected failure (strict).
"""

import importlib.util

import sklearn

import fastrbf.sklearn as fsk


def _load(relpath, **replace):
    """A private copy of one of scikit-learn's test modules, names replaced."""
    path = f"{sklearn.__path__[0]}/{relpath}"
    spec = importlib.util.spec_from_file_location(f"peer_{relpath.replace('/', '_')[:-3]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    vars(module).update(replace)
    return module


_kernel_ridge = _load("tests/test_kernel_ridge.py", KernelRidge=fsk.KernelRidge)
globals().update({name: f for name, f in vars(_kernel_ridge).items() if name.startswith("test_")})

DIFFERENCES = {
    "test_kernel_ridge_singular_kernel": "alpha=0 on a singular Gram matrix is refused (NotPositiveDefiniteError, "
                                         "naming the remedies); scikit-learn falls back to least squares",
    "test_kernel_ridge_precomputed": "the 'cosine' metric is not one of fastrbf's kernels (compute it and pass "
                                     "kernel='precomputed'); the linear, rbf and poly cases of the test agree",
}
