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
