"""The nearest-neighbour (Vecchia) GP against GPBoost's on the same data, ordering,
neighbours and fixed hyperparameters.

Conventions: GPBoost's covariance parameters are ``(error variance, marginal variance,
range)``; its ``"matern"`` with ``cov_fct_shape`` 0.5, 1.5, 2.5 is fastrbf's
``matern12/32/52`` with ``length_scale = range`` (Rasmussen & Williams' parametrisation),
its ``"gaussian"`` is ``exp(-(r / range)^2)``, fastrbf's ``"gaussian"`` with
``length_scale = range / sqrt(2)``.  Both approximate the covariance of the noisy
response and condition each point on its nearest earlier points in Euclidean distance;
``vecchia_ordering="none"`` with fastrbf's ``ordering="none"`` gives both the rows'
order.
"""

import math

import gpboost as gpb  # in the test extra (not in the minimum-versions job's list)
import numpy as np
import pytest

from fastrbf import vecchia_gaussian_process_lml


@pytest.mark.parametrize("cov, shape, kernel, scale", [
    ("matern", 0.5, "matern12", 1.0),
    ("matern", 1.5, "matern32", 1.0),
    ("matern", 2.5, "matern52", 1.0),
    ("gaussian", None, "gaussian", 1 / math.sqrt(2)),
])
@pytest.mark.parametrize("m", [5, 20])
def test_the_same_likelihood_as_gpboost(rng, cov, shape, kernel, scale, m):
    n = 1500
    X = rng.uniform(0, 1, (n, 2))
    y = np.sin(8 * X[:, 0]) * np.cos(5 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    extra = {} if shape is None else {"cov_fct_shape": shape}
    model = gpb.GPModel(gp_coords=X, cov_function=cov, gp_approx="vecchia", num_neighbors=m, vecchia_ordering="none",
                        likelihood="gaussian", num_parallel_threads=1, **extra)
    for noise, amp, rng_ in [(0.01, 1.3, 0.2), (0.3, 0.5, 0.05)]:
        theirs = -model.neg_log_likelihood(cov_pars=np.array([noise, amp, rng_]), y=y)
        ours = vecchia_gaussian_process_lml(X, y, n_neighbors=m, kernel=kernel, amplitude=amp,
                                            length_scale=rng_ * scale, noise=noise, ordering="none")
        assert ours == pytest.approx(theirs, rel=1e-6)
