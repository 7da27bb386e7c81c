"""learn_gamma finds the basin: from starts three decades off either way, the learned
width predicts held-out data as well as the best width of a grid (within 10%)."""

import numpy as np
import pytest

import fastrbf


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 1))
    y = np.sin(8 * X[:, 0]) + 0.05 * rng.standard_normal(400)
    Xt = rng.uniform(0, 1, (2000, 1))
    yt = np.sin(8 * Xt[:, 0]) + 0.05 * rng.standard_normal(2000)
    Xv = rng.uniform(0, 1, (200, 1))
    yv = np.sin(8 * Xv[:, 0]) + 0.05 * rng.standard_normal(200)
    grid = np.logspace(-1, 4, 11)
    errs = [np.mean((fastrbf.rbf_network(X, y, gamma=g, n_centers=25, seed=0).predict(Xt) - yt) ** 2) for g in grid]
    best = int(np.argmin(errs))
    return X, y, Xt, yt, (Xv, yv), grid[best], errs[best]


@pytest.mark.parametrize("factor", [1e-3, 1e-2, 1e2, 1e3])
@pytest.mark.parametrize("per_center", [False, True])
@pytest.mark.parametrize("use_validation", [False, True])
def test_learned_width_is_as_good_as_the_best_grid_width(problem, factor, per_center, use_validation):
    X, y, Xt, yt, val, g_best, e_best = problem
    net = fastrbf.rbf_network(X, y, gamma=g_best * factor, n_centers=25, seed=0, learn_gamma=True,
                              per_center=per_center, validation=val if use_validation else None)
    err = np.mean((net.predict(Xt) - yt) ** 2)
    assert err <= 1.1 * e_best
    assert np.all(np.diff(net.error_history) <= 0)


def test_the_result_does_not_depend_on_the_start(problem):
    # four decades apart: the same basin, the same training error to 1% (the error is
    # flat there, so the widths themselves may differ by tens of percent)
    X, y, *_ = problem
    a = fastrbf.rbf_network(X, y, gamma=0.05, n_centers=25, seed=0, learn_gamma=True)
    b = fastrbf.rbf_network(X, y, gamma=500.0, n_centers=25, seed=0, learn_gamma=True)
    assert a.error_history[-1] == pytest.approx(b.error_history[-1], rel=0.01)
    assert 0.5 < a.gamma[0] / b.gamma[0] < 2.0
