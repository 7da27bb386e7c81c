"""scikit-learn's own tests of the estimators fastrbf replaces, run on :mod:`fastrbf.sklearn`.

Each of scikit-learn's test files below (as installed) is loaded as a module of its own
while scikit-learn's estimator is replaced by fastrbf's in the module it is imported from,
the way a user switches by an import; its test functions run here, named
``test_<file>__<test>``.  Only the tests that run one of fastrbf's estimators are kept (not
those of ``MiniBatchKMeans`` or of scikit-learn's private helpers).  A test that fails
marks a deliberate difference, listed in ``docs/api.md`` ("Coming from scikit-learn and
SciPy") and in :data:`DIFFERENCES`, by which ``conftest.py`` marks it an expected failure
(strict).
"""

import importlib
import importlib.util
import inspect
import re
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator

import fastrbf.sklearn as fsk

#: scikit-learn's test file -> (its short name here, {module: {estimator name: fastrbf's}})
PEERS = {
    "tests/test_kernel_ridge.py": ("kernel_ridge", {"sklearn.kernel_ridge": {"KernelRidge": fsk.KernelRidge}}),
    "tests/test_kernel_approximation.py": ("kernel_approximation", {"sklearn.kernel_approximation": {
        "RBFSampler": fsk.RandomFourierFeatures, "Nystroem": fsk.Nystroem}}),
    "cluster/tests/test_k_means.py": ("k_means", {"sklearn.cluster": {"KMeans": fsk.KMeans}}),
    "gaussian_process/tests/test_gpr.py": ("gpr", {"sklearn.gaussian_process": {
        "GaussianProcessRegressor": fsk.GaussianProcessRegressor}}),
}


def _load(relpath, replace):
    """A private copy of one of scikit-learn's test modules, imported while the
    estimators of ``replace`` stand in for scikit-learn's (its parametrisations see
    fastrbf's classes too)."""
    saved = []
    for modname, names in replace.items():
        module = importlib.import_module(modname)
        for name, new in names.items():
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, new)
    try:
        spec = importlib.util.spec_from_file_location(f"peer_{relpath.replace('/', '_')[:-3]}",
                                                      f"{sklearn.__path__[0]}/{relpath}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for module_, name, old in saved:
            setattr(module_, name, old)
    return module


_USES = {}  # test name here -> regex of the replaced names
for _path, (_short, _replace) in PEERS.items():
    _names = [n for names in _replace.values() for n in names]
    _pattern = re.compile(r"\b(" + "|".join(_names) + r")\b")
    for _name, _f in vars(_load(_path, _replace)).items():
        if _name.startswith("test_") and callable(_f):
            # a parametrisation over a generator (which pytest deprecates) as a list
            _f.pytestmark = [pytest.mark.parametrize(m.args[0], list(m.args[1]), *m.args[2:], **m.kwargs).mark
                             if m.name == "parametrize" and not isinstance(m.args[1], (list, tuple)) else m
                             for m in getattr(_f, "pytestmark", [])]
            globals()[f"test_{_short}__{_name[5:]}"] = _f
            _USES[f"test_{_short}__{_name[5:]}"] = _pattern


def peer_selected(item):
    """Whether ``item`` runs one of fastrbf's estimators: a parameter that is one, and
    none that is another estimator class of scikit-learn's; else the test's code names one.
    The array-API tests are left out: fastrbf takes NumPy arrays (and scipy.sparse), not
    CuPy or torch arrays (see ``docs/api.md``); scikit-learn skips them without
    ``SCIPY_ARRAY_API=1`` and the array libraries."""
    if "array_api" in item.originalname:
        return False
    params = getattr(getattr(item, "callspec", None), "params", {}).values()
    classes = [p for p in params if isinstance(p, type) and issubclass(p, BaseEstimator)]
    if classes:
        return all(c.__module__.startswith("fastrbf") for c in classes)
    return bool(_USES[item.originalname].search(inspect.getsource(item.function)))


@pytest.fixture(autouse=True)
def sklearn_warning_rules():
    """scikit-learn's rules for warnings in its tests (its strictest, as its CI runs
    them): deprecations are errors, other warnings (a ``ConvergenceWarning``) are not."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for category in (DeprecationWarning, FutureWarning, np.exceptions.VisibleDeprecationWarning):
            warnings.filterwarnings("error", category=category)
        yield


@pytest.fixture
def global_random_seed():
    """scikit-learn's fixture, at its default seed."""
    return 42


@pytest.fixture(params=[np.float32, np.float64])
def global_dtype(request):
    """scikit-learn's fixture; float32 too (fastrbf keeps float32 end to end)."""
    return request.param


_VERBOSE = ("verbose > 0 reports fastrbf's progress (seeding, then each Lloyd iteration's centre shift) on stderr; "
            "scikit-learn prints each iteration's inertia on stdout, which fastrbf does not compute between iterations")
_DISTINCT = ("fewer distinct points than `n_clusters` is refused (a ValueError naming n_clusters and the number of "
             "distinct points); scikit-learn warns and returns duplicate centres")
_INIT_CENTROIDS = "calls scikit-learn's private KMeans._init_centroids, which fastrbf's KMeans does not have"
DIFFERENCES = {
    **{f"test_k_means__{name}": why for name, why in (
        ("kmeans_verbose", _VERBOSE),
        ("kmeans_warns_less_centers_than_unique_points", _DISTINCT),
        ("relocating_with_duplicates", _DISTINCT),
        ("sample_weight_init", _INIT_CENTROIDS),
        ("sample_weight_zero", _INIT_CENTROIDS))},
    "test_kernel_ridge__kernel_ridge_singular_kernel":
        "alpha=0 on a singular Gram matrix is refused (NotPositiveDefiniteError, naming the remedies); scikit-learn "
        "falls back to least squares",
}
