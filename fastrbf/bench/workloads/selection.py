"""Selection workload: choosing (gamma, alpha) for kernel ridge over a 10 x 30 grid by
closed-form leave-one-out (:func:`fastrbf.kernel_ridge_cv`) against scikit-learn's
``GridSearchCV(KernelRidge, cv=5)`` on the same grid.  scikit-learn's whole search takes
minutes per round even at the quick size (1500 fits), so it is timed on one gamma of
the ten (its 30 alphas, five folds each) and the time is multiplied by ten: the legend
says so.  fastrbf's leave-one-out values are those of exact refits (the tests check it
against refits with each point left out); the accuracy note gives the pair chosen."""

import time

import numpy as np

from fastrbf.models import kernel_ridge_cv

from ..harness import FASTRBF, Contender, Workload
from .common import seeded_rng
from .peers import optional_peer

GAMMAS = np.logspace(-3, 0, 10) / 8
ALPHAS = np.logspace(-6, 1, 30)


def workloads() -> list[Workload]:
    """The selection workloads, in the order of the report."""
    return [_select_workload()]


def _grid_search(a, gammas):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV

    gs = GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": list(gammas), "alpha": list(ALPHAS)}, cv=5,
                      scoring="neg_mean_squared_error")
    return gs.fit(a["X"], a["y"])


class _SkSearch:
    """scikit-learn's search, timed by itself: one gamma (30 alphas, 5 folds) times the
    number of gammas."""

    self_timed = True  # returns its own time

    def __call__(self, a):
        t0 = time.perf_counter()
        _grid_search(a, GAMMAS[GAMMAS.size // 2 : GAMMAS.size // 2 + 1])
        return (time.perf_counter() - t0) * GAMMAS.size


def _select_workload():
    def setup(n):
        rng = seeded_rng()
        X = rng.standard_normal((n, 8))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        return {"X": X, "y": y}

    def fast(a):
        res = kernel_ridge_cv(a["X"], a["y"], gamma=GAMMAS, alpha=ALPHAS)
        a["best"] = (res.best_gamma, res.best_alpha)
        return res

    def accuracy(a):
        return f"best (gamma, alpha) = ({a['best'][0]:.3g}, {a['best'][1]:.3g}) by exact leave-one-out"

    cs = [
        Contender("fastrbf kernel_ridge_cv (LOO)", FASTRBF, fast),
        optional_peer("scikit-learn GridSearchCV(KernelRidge, cv=5)", "sklearn", _SkSearch(), package="sklearn",
                      note=f"one gamma of the {GAMMAS.size} timed (30 alphas x 5 folds), times {GAMMAS.size}"),
    ]
    return Workload("select-krr", setup, lambda a: GAMMAS.size * ALPHAS.size, "pairs/s", cs,
                    lambda a: f"{a['X'].shape[0]}x8, {GAMMAS.size} gammas x {ALPHAS.size} alphas", sizes=(500, 5000),
                    accuracy=accuracy)
