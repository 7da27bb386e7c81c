"""Oracles and tolerances shared by the tests."""

import numpy as np

#: relative tolerances per dtype, for comparisons against an oracle
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def exact_sqdist(X, Y):
    """Squared distances in extended precision (the 'exact value' of the accuracy tests)."""
    Xl = np.asarray(X).astype(np.longdouble)
    Yl = np.asarray(Y).astype(np.longdouble)
    diff = Xl[:, None, :] - Yl[None, :, :]
    return (diff * diff).sum(-1)


def central_diff(f, X, h):
    """Fourth-order central differences, step ``h``, of ``f`` (values (m,) or (m, k)) at
    the rows of ``X``: shape (m, d) or (m, k, d)."""
    cols = []
    for a in range(X.shape[1]):
        def at(step, a=a):
            Z = np.array(X, dtype=np.float64)
            Z[:, a] += step
            return np.asarray(f(Z), dtype=np.float64)
        cols.append((8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h))
    return np.stack(cols, axis=-1)


def assert_rel(actual, expected, rtol, atol=0.0):
    """Every entry within ``rtol`` relative (or ``atol``) of ``expected``."""
    actual = np.asarray(actual, dtype=np.longdouble)
    expected = np.asarray(expected, dtype=np.longdouble)
    err = np.abs(actual - expected)
    bound = rtol * np.abs(expected) + atol
    bad = err > bound
    assert not bad.any(), (
        f"{int(bad.sum())} entries out of tolerance; worst relative error "
        f"{float((err / np.maximum(np.abs(expected), 1e-300)).max()):.3e} (rtol {rtol})"
    )


#: the warning filter of the tests of the deprecated GP names (their one-release wrappers)
DEPRECATED_GP = r"ignore:fastrbf\.(gp_regression|gp_log_marginal_likelihood|GPModel|GPPrediction) is deprecated:FutureWarning"
