"""The nearest-neighbour (Vecchia) likelihood: the plain NumPy oracle of
``fastrbf.reference`` against the exact GP's likelihood."""

import numpy as np
import pytest

from fastrbf import gaussian_process_lml, reference


def _data(rng, n):
    X = rng.uniform(0, 1, (n, 2))
    return X, np.sin(4 * X[:, 0]) + X[:, 1] ** 2


@pytest.mark.parametrize("kernel, ls", [("gaussian", 0.3), ("matern52", [0.3, 0.8])])
def test_the_vecchia_oracle_with_every_earlier_point_is_the_exact_likelihood(rng, kernel, ls):
    # the plain NumPy Vecchia likelihood (the oracle of the nearest-neighbour GP) against
    # the exact GP's: with n - 1 neighbours each factor is an exact conditional
    X, y = _data(rng, n=30)
    exact = gaussian_process_lml(X, y, kernel=kernel, amplitude=1.3, length_scale=ls, noise=1e-2)
    for order in (np.arange(30), np.argsort(X[:, 0]), rng.permutation(30)):
        got = reference.vecchia_log_likelihood(X, y, order, 29, kernel=kernel, amplitude=1.3, length_scale=ls, noise=1e-2)
        assert got == pytest.approx(exact, rel=1e-10)
    few = reference.vecchia_log_likelihood(X, y, np.arange(30), 3, kernel=kernel, amplitude=1.3, length_scale=ls,
                                           noise=1e-2)
    assert abs(few - exact) > 1e-6 * abs(exact)  # fewer neighbours: an approximation, not the same number
