"""Gaussian-process workloads: the fit (hyperparameters by L-BFGS-B from one start) with
the PRML kernel and with a Matern-5/2 kernel with one length scale per feature, and the
predictive mean, against scikit-learn's ``GaussianProcessRegressor`` with the same
kernel.  The accuracy note of the Matern fit gives both log marginal likelihoods.

``sparse-gp``: the sparse GP at a million points (widths, amplitude and noise learned,
then mean and variance at the test points), with exact kernel ridge on a subsample
(same kernel, length scales and ``alpha = noise / amplitude``) as the baseline; its
accuracy note gives both test RMSEs and the coverage of the 95% predictive interval.

``vecchia-gp``: the nearest-neighbour GP (30 neighbours, Matern-3/2, hyperparameters
learned, then mean and standard deviation at the test points) on a rough 3-D function
with a short length scale, beside the sparse GP with 2000 landmarks on the same data;
the accuracy note gives both test RMSEs and 95% coverages and the time of one Vecchia
likelihood with its gradient.  ``vecchia-lml``: one likelihood with its gradient
(ordering and neighbours included) against GPBoost's Vecchia likelihood on the same
ordering and neighbours (its model built, then one likelihood: GPBoost's Python API has
no gradient call), and both on prebuilt models (the neighbours found before: fastrbf's
likelihood with its gradient, GPBoost's without)."""

import time

import numpy as np

from fastrbf import _threads
from fastrbf.gp._exact import gaussian_process
from fastrbf.gp._sparse import sparse_gaussian_process
from fastrbf.gp._vecchia import vecchia_gaussian_process, vecchia_gaussian_process_lml
from fastrbf.models.ridge import kernel_ridge

from ..harness import BASELINE, FASTRBF, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng, try_import
from .peers import optional_peer


def workloads() -> list[Workload]:
    """The Gaussian-process workloads, in the order of the report."""
    return [_gp_workload(), _gp_ard_workload(), _gp_predict_workload(), _gp_grad_std_workload(), _sparse_gp_workload(),
            _vecchia_gp_workload(), _vecchia_lml_workload()]


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
            return gaussian_process(a["X"], a["y"], kernel="prml", amplitude=1.0, length_scale=1.0, constant=1.0,
                                    linear=1.0, noise=0.1)

    def sk(a):
        import warnings

        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

        k = (ConstantKernel(1.0) * RBF(1.0) + ConstantKernel(1.0)
             + ConstantKernel(1.0) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(0.1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return GaussianProcessRegressor(k, alpha=0.0, n_restarts_optimizer=0).fit(a["X"], a["y"])

    cs = [Contender("fastrbf gaussian_process", FASTRBF, ours)]
    cs.append(optional_peer("scikit-learn GaussianProcessRegressor", "sklearn.gaussian_process", sk, package="sklearn"))
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
    cs.append(optional_peer("scikit-learn GaussianProcessRegressor", "sklearn.gaussian_process", sk, package="sklearn"))
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
        data["model"] = gaussian_process(X, y, kernel="prml", amplitude=theta[0], length_scale=1 / np.sqrt(theta[1]),
                                         constant=theta[2], linear=theta[3], noise=noise, optimize=False)
        gpm = try_import("sklearn.gaussian_process")
        if gpm is not None:
            from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, WhiteKernel

            k = (ConstantKernel(theta[0]) * RBF(1 / np.sqrt(theta[1])) + ConstantKernel(theta[2])
                 + ConstantKernel(theta[3]) * DotProduct(sigma_0=0.0, sigma_0_bounds="fixed") + WhiteKernel(noise))
            data["sk"] = gpm.GaussianProcessRegressor(k, alpha=0.0, optimizer=None).fit(X, y)
        return data

    cs = [Contender("fastrbf GaussianProcess.predict (mean)", FASTRBF, lambda a: a["model"].predict(a["Q"]))]
    cs.append(optional_peer("scikit-learn predict(return_std=False)", "sklearn.gaussian_process",
                            lambda a: a["sk"].predict(a["Q"]), package="sklearn"))
    return Workload("gp-predict", setup, lambda a: a["Q"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, {a['Q'].shape[0]} query points, mean only",
                    sizes=((500, 20000), (1000, 45000), (2000, 100000)), cost=_predict_cost)


def _gp_grad_std_workload():
    # a Matern-5/2 GP with one length scale per feature in 3-D: mean and standard
    # deviation, against the same with the mean's gradient, the gradient's variance and
    # the standard deviation's gradient (each query then solves d + 1 columns, not 1)
    def setup(size):
        rng = seeded_rng()
        n, m = size
        X = rng.random((n, 3))
        y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        model = gaussian_process(X, y, kernel="matern52", length_scale=[0.3, 0.5, 0.8], noise=0.01, optimize=False)
        return {"X": X, "Q": rng.random((m, 3)), "model": model}

    cs = [Contender("fastrbf predict mean, std", FASTRBF, lambda a: a["model"].predict(a["Q"], return_std=True)),
          Contender("fastrbf predict mean, std and their gradients", FASTRBF,
                    lambda a: a["model"].predict(a["Q"], return_std=True, return_grad=True))]
    return Workload("gp-predict-grad-std", setup, lambda a: a["Q"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=3, matern52 ARD, {a['Q'].shape[0]} query points",
                    sizes=((1000, 5000), (2000, 100000)))


def _predict_cost(a):
    """The mean: one kernel sum over the training points per query (an exp per pair)."""
    (n, d), m = a["X"].shape, a["Q"].shape[0]
    return Cost(flops=2.0 * m * n * (d + 2), bytes_read=(m + n) * d * 8.0, bytes_written=m * 8.0, exps=float(m) * n)


def _sparse_gp_workload():
    # a smooth function of 3 of 16 standard normal coordinates plus noise (sd 0.5), as
    # krr-large; Matern-5/2 with one length scale per feature, targets normalised
    noise = 0.5

    def f(X):
        return np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]

    def setup(size):
        rng = seeded_rng()
        n, m, n_sub, n_test = size
        X = rng.standard_normal((n, 16))
        Xt = rng.standard_normal((n_test, 16))
        return {"X": X, "y": f(X) + noise * rng.standard_normal(n), "m": m, "n_sub": n_sub, "Xt": Xt,
                "yt": f(Xt) + noise * rng.standard_normal(n_test)}

    def ours(a):
        model = sparse_gaussian_process(a["X"], a["y"], n_landmarks=a["m"], kernel="matern52", ard=True,
                                        length_scale=4.0, noise=0.1, normalize_y=True, seed=0)
        a["model"], a["pred"] = model, model.predict(a["Xt"], return_std=True)
        return model

    def exact(a):
        model = a.get("model") or ours(a)
        n_sub = a["n_sub"]
        krr = kernel_ridge(a["X"][:n_sub], a["y"][:n_sub], kernel="matern52", gamma=1.0,
                           length_scale=np.broadcast_to(model.length_scale, (16,)),
                           alpha=model.noise / model.amplitude, fit_intercept=True, solver="cholesky")
        a["exact"] = krr.predict(a["Xt"])
        return krr

    def accuracy(a):
        if "pred" not in a:
            ours(a)
        if "exact" not in a:
            exact(a)
        (mean, std), yt = a["pred"], a["yt"]
        r_gp, r_ex = (float(np.sqrt(np.mean((p - yt) ** 2))) for p in (mean, a["exact"]))
        cover = float(np.mean(np.abs(yt - mean) <= 1.959964 * std))
        return (f"test RMSE {r_gp:.4f} vs exact KRR on {a['n_sub']} points {r_ex:.4f}: {r_gp / r_ex:.3f}x; "
                f"95% interval coverage {100 * cover:.1f}%; learned noise sd "
                f"{np.sqrt(a['model'].noise) * a['model'].y_std[0]:.3f} (true {noise})")

    cs = [Contender("fastrbf sparse_gaussian_process (fit, mean and std)", FASTRBF, ours),
          Contender("exact kernel_ridge on the subsample (mean only)", BASELINE, exact)]
    return Workload("sparse-gp", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, M={a['m']}, Matern-5/2 ARD learned, "
                              f"{a['Xt'].shape[0]} test points",
                    sizes=((20000, 200, 5000, 10000), (1_000_000, 2000, 20000, 100000)), accuracy=accuracy)


def _rough(X):
    """The Vecchia workloads' target: a rough function of 3 features (about 25 bumps
    along the first)."""
    return np.sin(25 * X[:, 0]) * np.cos(20 * X[:, 1]) + np.sin(15 * X[:, 2])


def _vecchia_gp_workload():
    noise = 0.1

    def setup(size):
        rng = seeded_rng()
        n, n_test = size
        X, Xt = rng.random((n, 3)), rng.random((n_test, 3))
        return {"X": X, "y": _rough(X) + noise * rng.standard_normal(n), "Xt": Xt, "ft": _rough(Xt),
                "yt": _rough(Xt) + noise * rng.standard_normal(n_test)}

    def vecchia(a):
        model = vecchia_gaussian_process(a["X"], a["y"], n_neighbors=30, kernel="matern32", length_scale=0.1,
                                         noise=0.1, normalize_y=True)
        a["vecchia"], a["vecchia_pred"] = model, model.predict(a["Xt"], return_std=True)
        return model

    def sparse(a):
        model = sparse_gaussian_process(a["X"], a["y"], n_landmarks=2000, kernel="matern32", length_scale=0.1,
                                        noise=0.1, normalize_y=True, seed=0)
        a["sparse"], a["sparse_pred"] = model, model.predict(a["Xt"], return_std=True)
        return model

    def accuracy(a):
        if "vecchia_pred" not in a:
            vecchia(a)
        if "sparse_pred" not in a:
            sparse(a)
        parts = []
        for name in ("vecchia", "sparse"):
            mean, std = a[f"{name}_pred"]
            rmse = float(np.sqrt(np.mean((mean - a["ft"]) ** 2)))
            cover = float(np.mean(np.abs(a["yt"] - mean) <= 1.959964 * std))
            parts.append(f"{name}: test RMSE {rmse:.4f}, 95% coverage {100 * cover:.1f}%")
        m = a["vecchia"]
        t0 = time.perf_counter()
        vecchia_gaussian_process_lml(a["X"], a["y"], n_neighbors=30, kernel="matern32", amplitude=m.amplitude,
                                     length_scale=float(m.length_scale[0]), noise=m.noise, eval_gradient=True)
        lml_s = time.perf_counter() - t0
        return (f"{'; '.join(parts)} (RMSE against the noise-free target, coverage of noisy targets, noise sd "
                f"{noise}); one Vecchia likelihood with gradient (maximin ordering and neighbours included) "
                f"{lml_s:.2f} s; the Vecchia fit took {sum(r['n_iter'] for r in m.restarts)} L-BFGS-B iterations")

    cs = [Contender("fastrbf vecchia_gaussian_process, 30 neighbours (fit, mean and std)", FASTRBF, vecchia),
          Contender("fastrbf sparse_gaussian_process, 2000 landmarks (fit, mean and std)", BASELINE, sparse)]
    return Workload("vecchia-gp", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=3, rough target (length scale ~0.05), Matern-3/2 learned, "
                              f"{a['Xt'].shape[0]} test points",
                    sizes=((20000, 10000), (1_000_000, 100_000)), accuracy=accuracy)


def _vecchia_lml_workload():
    # one likelihood at fixed hyperparameters, the rows' order, 30 neighbours: the same
    # number from fastrbf and GPBoost (their conventions agree for Matern-3/2)
    amp, ls, noise = 1.0, 0.05, 0.01

    def setup(size):
        rng = seeded_rng()
        X = rng.random((size, 3))
        return {"X": X, "y": _rough(X) + 0.1 * rng.standard_normal(size)}

    def ours(a):
        a["ours"] = vecchia_gaussian_process_lml(a["X"], a["y"], n_neighbors=30, kernel="matern32", ordering="none",
                                                 eval_gradient=True, amplitude=amp, length_scale=ls, noise=noise)
        return a["ours"]

    def gpb_model(a):
        import gpboost

        return gpboost.GPModel(gp_coords=a["X"], cov_function="matern", cov_fct_shape=1.5, gp_approx="vecchia",
                               num_neighbors=30, vecchia_ordering="none", likelihood="gaussian",
                               num_parallel_threads=_threads.resolve(None))

    def gpb_nll(model, a):
        return -model.neg_log_likelihood(cov_pars=np.array([noise, amp, ls]),
                                         y=a["y"])

    def gpb_full(a):
        a["gpb"] = gpb_nll(gpb_model(a), a)
        return a["gpb"]

    def gpb_alone(a):
        if "gpb_model" not in a:
            a["gpb_model"] = gpb_model(a)
        return gpb_nll(a["gpb_model"], a)

    def accuracy(a):
        if "ours" not in a:
            ours(a)
        if "gpb" not in a and try_import("gpboost") is not None:
            gpb_full(a)
        theirs = f"{a['gpb']:.9g} (GPBoost)" if "gpb" in a else "GPBoost not installed"
        return f"log likelihood {a['ours'][0]:.9g} (fastrbf), {theirs}"

    def ours_alone(a):
        if "model" not in a:
            a["model"] = vecchia_gaussian_process(a["X"], a["y"], n_neighbors=30, kernel="matern32", ordering="none",
                                                  optimize=False, amplitude=amp, length_scale=ls, noise=noise)
        return a["model"].log_marginal_likelihood(eval_gradient=True)

    cs = [Contender("fastrbf vecchia_gaussian_process_lml with gradient (neighbours included)", FASTRBF, ours),
          Contender("fastrbf log_marginal_likelihood with gradient (model prebuilt)", FASTRBF, ours_alone),
          optional_peer("gpboost GPModel + neg_log_likelihood (neighbours included, no gradient)", "gpboost",
                        gpb_full, package="gpboost"),
          optional_peer("gpboost neg_log_likelihood alone (model prebuilt, no gradient)", "gpboost", gpb_alone,
                        package="gpboost")]
    return Workload("vecchia-lml", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=3, 30 neighbours, Matern-3/2, fixed hyperparameters",
                    sizes=(20000, 100000), accuracy=accuracy)
