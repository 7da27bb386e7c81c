"""SciPy's own tests of ``RBFInterpolator``, run on :func:`fastrbf.interpolate`.

The test classes of SciPy's ``scipy/interpolate/tests/test_rbfinterp.py`` (as installed)
run here with their ``build`` replaced by a thin adapter: SciPy's call
``RBFInterpolator(y, d, neighbors, smoothing, kernel, epsilon, degree)(x)`` becomes
``fastrbf.interpolate(y, d, kernel=kernel, gamma=epsilon**2, degree=degree,
alpha=smoothing, neighbors=neighbors).predict(x)``, the way a SciPy user would switch.
Dense (``neighbors=None``) and local (``neighbors=20``) interpolation both run.

A test that fails marks a deliberate difference, each listed in ``docs/api.md``
("Coming from scikit-learn and SciPy") and in :data:`DIFFERENCES`, by which
``conftest.py`` marks it an expected failure (strict: one that starts to pass fails
here, so the list stays true).
"""

import numpy as np
import pytest
from scipy.interpolate.tests import test_rbfinterp as sp  # SciPy installs its tests

import fastrbf


class Adapter:
    """SciPy's ``RBFInterpolator`` signature over :func:`fastrbf.interpolate`."""

    def __init__(self, y, d, neighbors=None, smoothing=0.0, kernel="thin_plate_spline", epsilon=None, degree=None):
        kw = {} if epsilon is None else {"gamma": float(epsilon) ** 2}
        if neighbors is not None and np.isfinite(neighbors):
            kw["neighbors"] = int(neighbors)
        d = np.asarray(d)
        self.value_shape = d.shape[1:]
        values = d.reshape(d.shape[0], -1) if d.ndim > 2 else d
        self.model = fastrbf.interpolate(np.asarray(y), values, kernel=kernel, degree=degree, alpha=smoothing, **kw)

    def __call__(self, x):
        out = self.model.predict(np.asarray(x))
        return out.reshape(out.shape[:1] + self.value_shape)


@pytest.fixture
def xp():
    """SciPy's array-namespace fixture, for NumPy (fastrbf takes NumPy arrays only)."""
    return np


_WORDING = ("fastrbf's messages name its own arguments (`X`, `Y`, `alpha`, `gamma`) and say what to do; SciPy's "
            "name `y`, `d`, `smoothing`, `epsilon`: the same errors are raised, worded otherwise")
DIFFERENCES = {
    "test_inconsistent_x_dimensions_error": _WORDING,
    "test_inconsistent_d_length_error": _WORDING,
    "test_y_not_2d_error": _WORDING,
    "test_x_not_2d_error": _WORDING,
    "test_inconsistent_smoothing_length_error": _WORDING,
    "test_epsilon_not_specified_error": _WORDING,
    "test_complex_data": "complex data values are refused (fit the real and imaginary parts as two columns of `Y`)",
    "test_chunking": "the test sets SciPy's own memory budget on the interpolator object (fastrbf's evaluation is "
                     "fused: it has no chunk size to set)",
}


class TestDense(sp._TestRBFInterpolator):
    def build(self, *args, **kwargs):
        return Adapter(*args, **kwargs)


class TestNeighbors20(sp._TestRBFInterpolator):
    def build(self, *args, **kwargs):
        return Adapter(*args, **kwargs, neighbors=20)
