"""The hyperparameter search of the Gaussian processes and the scikit-learn estimator:
SciPy's L-BFGS-B from several starts, the best kept, every start a row of the table of
restarts and a run of the progress reports.

A failed evaluation (a covariance that is not positive definite, an overflow) counts as
``-inf``, so the line search steps back instead of the start being lost.
"""

import math

import numpy as np


class IterationReport:
    """L-BFGS-B's callback that reports each iteration's likelihood to ``rep``.

    SciPy >= 1.11 passes the iterate as an ``OptimizeResult`` (its ``fun``) to a callback
    whose argument is named ``intermediate_result``; older SciPy passes the point alone,
    whose value is then the objective's last evaluation there (L-BFGS-B accepts the
    point its line search evaluated last), recorded by :meth:`watch`."""

    def __init__(self, rep):
        self.rep = rep
        self.done = 0
        self.last: tuple[np.ndarray | None, float] = (None, math.nan)

    def watch(self, objective):
        """``objective`` (``x -> (f, gradient)``) recording its last point and value."""
        def watched(x):
            f, g = objective(x)
            self.last = (np.array(x, copy=True), f)
            return f, g
        return watched

    def __call__(self, intermediate_result):  # scipy calls it once per iteration
        self.done += 1
        fun = getattr(intermediate_result, "fun", None)
        if fun is None:  # an older SciPy: the point
            x, f = self.last
            fun = f if x is not None and np.array_equal(x, intermediate_result) else math.nan
        self.rep.step(self.done, lml=-float(fun))


def maximise(evaluate, starts, bounds, errors, options=None, rows=None, rep=None):
    """The maximum of ``evaluate(theta) -> (value, gradient)`` found by SciPy's L-BFGS-B
    from each of ``starts`` within ``bounds`` (one ``(low, high)`` per entry), the best
    over the starts; ``evaluate`` raising one of ``errors`` counts as ``-inf``.  None when
    every start failed.  Each start appends a row to the list ``rows`` (when given) and
    reports its iterations to the progress reporter ``rep``.  Shared by the Gaussian
    processes and the scikit-learn estimator."""
    from scipy.optimize import minimize

    def objective(theta):
        try:
            value, grad = evaluate(theta)
        except errors:
            return math.inf, np.zeros_like(theta)
        return -value, -grad

    report = IterationReport(rep)
    if rep:
        objective = report.watch(objective)
        rep.runs(len(starts))
    best = None
    for i, t0 in enumerate(starts):
        if rep:
            rep.run(i + 1)
            rep.start("l-bfgs-b")
            report.done = 0
        res = minimize(objective, t0, jac=True, method="L-BFGS-B", bounds=bounds, options=options,
                       callback=report if rep else None)
        value = -float(res.fun) if np.isfinite(res.fun) else -math.inf
        if rep:
            rep.finish(int(res.nit), lml=value, converged=bool(res.success))
        if rows is not None:
            rows.append(dict(start=np.array(t0, dtype=np.float64), theta=np.asarray(res.x, dtype=np.float64).copy(),
                             lml=value, converged=bool(res.success), n_iter=int(res.nit)))
        if np.isfinite(res.fun) and (best is None or res.fun < best[0]):
            best = (float(res.fun), np.asarray(res.x, dtype=np.float64))
    return None if best is None else best[1]
