"""Gaussian-process workloads: the fit (hyperparameters by L-BFGS-B from one start) with
the PRML kernel and with a Matern-5/2 kernel with one length scale per feature, and the
predictive mean, against scikit-learn's ``GaussianProcessRegressor`` with the same
kernel.  The accuracy note of the Matern fit gives both log marginal likelihoods."""

import numpy as np

from fastrbf.gp import gp_regression
from fastrbf.gpr import gaussian_process

from ..harness import FASTRBF, PEER, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import


def workloads() -> list[Workload]:
    """The Gaussian-process workloads, in the order of the report."""
    return [_gp_workload(), _gp_ard_workload(), _gp_predict_workload()]


def _fit_data(n):
    """The fit workloads' data: n points in 8-D and a noisy smooth target."""
    rng = seeded_rng()
    X = rng.random((n, 8))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    return {"X": X, "y": y}


def _gp_workload():
    setup = _fit_data

    def ours(a):
        import warnings

        with warnings.catch_warnings():  # the linear term's weight goes to its bound here
            warnings.simplefilter("ignore")
            return gp_regression(a["X"], a["y"], theta0=[1.0, 1.0, 1.0, 1.0], noise=0.1, n_restarts=0)

    def sk(a):
        import warnings

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

        k = (ConstantKernel(1.0) * RBF(1.0) + ConstantKernel(1.0)
             + ConstantKernel(1.0) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(0.1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GaussianProcessRegressor(k, alpha=0.0, n_restarts_optimizer=0).fit(a["X"], a["y"])

    cs = [Contender("fastrbf gp_regression", FASTRBF, ours)]
    if try_import("sklearn.gaussian_process") is not None:
        cs.append(Contender("scikit-learn GaussianProcessRegressor", PEER, sk))
    return Workload("gp-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, PRML kernel, L-BFGS-B from one start", sizes=(250, 700, 2000))


def _gp_ard_workload():
    setup = _fit_data

    def ours(a):
        gp = gaussian_process(a["X"], a["y"], kernel="matern52", ard=True, noise=0.1)
        a["lml"] = gp.log_marginal_likelihood_value
        return gp

    def sk(a):
        import warnings

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        k = ConstantKernel(1.0) * Matern(length_scale=np.ones(8), nu=2.5) + WhiteKernel(0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp = GaussianProcessRegressor(k, alpha=0.0, n_restarts_optimizer=0).fit(a["X"], a["y"])
        a["sk_lml"] = gp.log_marginal_likelihood_value_
        return gp

    def accuracy(a):
        if "sk_lml" not in a:
            return f"log marginal likelihood {a['lml']:.6g}"
        return f"log marginal likelihood {a['lml']:.6g} (scikit-learn {a['sk_lml']:.6g})"

    cs = [Contender("fastrbf gaussian_process", FASTRBF, ours)]
    if try_import("sklearn.gaussian_process") is not None:
        cs.append(Contender("scikit-learn GaussianProcessRegressor", PEER, sk))
    return Workload("gp-fit-matern52-ard", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, Matern-5/2, one length scale per feature",
                    sizes=(250, 2000), accuracy=accuracy)


def _gp_predict_workload():
    theta, noise = [1.0, 2.0, 0.1, 0.1], 0.01

    def setup(size):
        rng = seeded_rng()
        n, m = size
        X = rng.random((n, 8))
        y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        data: dict = {"X": X, "Q": rng.random((m, 8))}
        data["model"] = gp_regression(X, y, theta0=theta, noise=noise, optimize=False)
        gpm = try_import("sklearn.gaussian_process")
        if gpm is not None:
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

            k = (ConstantKernel(theta[0]) * RBF(1 / np.sqrt(theta[1])) + ConstantKernel(theta[2])
                 + ConstantKernel(theta[3]) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(noise))
            data["sk"] = gpm.GaussianProcessRegressor(k, alpha=0.0, optimizer=None).fit(X, y)
        return data

    cs = [Contender("fastrbf GPModel.predict (mean)", FASTRBF, lambda a: a["model"].predict(a["Q"]))]
    if try_import("sklearn.gaussian_process") is not None:
        cs.append(Contender("scikit-learn predict(return_std=False)", PEER, lambda a: a["sk"].predict(a["Q"])))
    return Workload("gp-predict", setup, lambda a: a["Q"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, {a['Q'].shape[0]} query points, mean only",
                    sizes=((500, 20000), (1000, 45000), (2000, 100000)), cost=_predict_cost)


def _predict_cost(a):
    """The mean: one kernel sum over the training points per query (an exp per pair)."""
    (n, d), m = a["X"].shape, a["Q"].shape[0]
    return Cost(flops=2.0 * m * n * (d + 2), bytes_read=(m + n) * d * 8.0, bytes_written=m * 8.0, exps=float(m) * n)
