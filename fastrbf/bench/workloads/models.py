"""Model-fitting workloads: kernel ridge regression (exact, and Nystroem by Falkon's
PCG at large N, with its accuracy against exact KRR on a subsample), RBF interpolation
with prediction, and the RBF network fit, against the NumPy reference, scikit-learn
and SciPy; and the cost of the gradient: ``predict(X, return_grad=True)`` against
``predict(X)`` of the same model."""

import numpy as np

from fastrbf import reference
from fastrbf.kernels import gram
from fastrbf.models import interpolate, kernel_ridge, partition_of_unity, rbf_network

from ..harness import BASELINE, FASTRBF, FLOOR, NUMPY, Contender, Workload
from ..roofline import Cost
from .common import seeded_rng
from .linalg import PotrfFloor
from .peers import optional_peer


def workloads() -> list[Workload]:
    """The model-fitting workloads, in the order of the report."""
    return [_krr_workload(), _krr_large_workload(), _interp_workload(), _interp_local_workload(),
            _interp_large_workload(), _predict_grad_workload(), _rbfnet_workload(), _rbfnet_forward_workload()]


def _krr_workload():
    gamma, alpha = 1.0 / 16, 1e-3

    def setup(n):
        rng = seeded_rng()
        X = rng.standard_normal((n, 16))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        A = gram(X, gamma=gamma)
        A.flat[:: n + 1] += alpha
        return {"X": X, "y": y, "A": A, "work": np.empty_like(A)}

    def sk(a):
        from sklearn.kernel_ridge import KernelRidge

        return KernelRidge(alpha=alpha, kernel="rbf", gamma=gamma).fit(a["X"], a["y"])

    cs = [
        Contender("fastrbf kernel_ridge", FASTRBF, lambda a: kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=alpha)),
        Contender("numpy reference (Gram + solve)", NUMPY,
                  lambda a: reference.kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=alpha)),
        Contender("LAPACK dpotrf alone", FLOOR, PotrfFloor()),
    ]
    cs.append(optional_peer("scikit-learn KernelRidge", "sklearn.kernel_ridge", sk, package="sklearn"))
    return Workload("krr-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, gaussian, alpha {alpha:g}", sizes=(2000, 4500, 10000),
                    cost=lambda a: fit_cost(a["X"].shape[0], a["X"].shape[1], 0))


def fit_cost(n: int, d: int, m: int) -> Cost:
    """An exact Gaussian kernel fit on ``n`` points of dimension ``d`` with ``m``
    predictions: half the Gram matrix (exps, flops, one triangle written), its Cholesky
    (n^3/3) and two triangular solves, then the m x n kernel sum (an exp per pair)."""
    return Cost(flops=n**3 / 3 + float(n) * n * d + 2.0 * n * n + 2.0 * m * n * (d + 1),
                bytes_read=(n + m) * d * 8.0, bytes_written=n * n * 4.0 + (n + m) * 8.0,
                exps=n * (n - 1) / 2 + float(m) * n)


def _interp_workload():
    gamma = 2500.0  # epsilon 50 on the unit square: a well-posed Gaussian system at N = 5000 (SciPy agrees to 5e-12)

    def setup(size):
        rng = seeded_rng()
        n, m = size
        X = rng.random((n, 2))
        y = np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1])
        return {"X": X, "y": y, "Xq": rng.random((m, 2))}

    def sp(a):
        from scipy.interpolate import RBFInterpolator

        return RBFInterpolator(a["X"], a["y"], kernel="gaussian", epsilon=np.sqrt(gamma))(a["Xq"])

    def ref(a):
        return reference.interpolate(a["X"], a["y"], a["Xq"], kernel="gaussian", gamma=gamma, degree=0)

    cs = [
        Contender("fastrbf interpolate + predict", FASTRBF,
                  lambda a: interpolate(a["X"], a["y"], kernel="gaussian", gamma=gamma).predict(a["Xq"])),
        Contender("numpy reference", NUMPY, ref),
    ]
    cs.append(optional_peer("SciPy RBFInterpolator", "scipy.interpolate", sp, package="scipy"))
    return Workload("interp", setup, lambda a: a["Xq"].shape[0], "evaluations/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=2, gaussian, {a['Xq'].shape[0]} evaluations",
                    sizes=((1000, 2000), (2200, 4500), (5000, 10000)),
                    cost=lambda a: fit_cost(a["X"].shape[0], a["X"].shape[1], a["Xq"].shape[0]))


def _cube(size):
    # the data of the 3-D interpolation workloads: n points, then m query points,
    # uniform in the unit cube (the same draws for every workload of a size)
    rng = seeded_rng()
    n, m = size
    return rng.random((n, 3)), rng.random((m, 3))


def _smooth3(X):
    # a smooth function of the unit cube, the target of the local and gradient workloads
    return np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1]) + X[:, 2]


def _interp_local_workload():
    # SciPy's RBFInterpolator(neighbors=50): thin-plate spline with a linear tail in 3-D
    def setup(size):
        X, Xq = _cube(size)
        return {"X": X, "y": _smooth3(X), "Xq": Xq}

    def ours(a):
        a["ours"] = interpolate(a["X"], a["y"], neighbors=50).predict(a["Xq"])
        return a["ours"]

    def sp(a):
        from scipy.interpolate import RBFInterpolator

        a["scipy"] = RBFInterpolator(a["X"], a["y"], neighbors=50)(a["Xq"])
        return a["scipy"]

    def accuracy(a):
        if "scipy" not in a:
            return ""
        return f"largest difference from SciPy {float(np.abs(a['ours'] - a['scipy']).max()):.1e}"

    cs = [Contender("fastrbf interpolate(neighbors=50)", FASTRBF, ours)]
    cs.append(optional_peer("SciPy RBFInterpolator(neighbors=50)", "scipy.interpolate", sp, package="scipy"))
    return Workload("interp-local", setup, lambda a: a["Xq"].shape[0], "evaluations/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=3, thin-plate spline, k=50, {a['Xq'].shape[0]} evaluations",
                    sizes=((10000, 10000), (100000, 100000)), accuracy=accuracy)


def _franke3(X):
    # Franke's function with a third coordinate in every bump
    x, y, z = 9 * X[:, 0], 9 * X[:, 1], 9 * X[:, 2]
    return (0.75 * np.exp(-((x - 2) ** 2 + (y - 2) ** 2 + (z - 2) ** 2) / 4)
            + 0.75 * np.exp(-(x + 1) ** 2 / 49 - (y + 1) / 10 - (z + 1) / 10)
            + 0.5 * np.exp(-((x - 7) ** 2 + (y - 3) ** 2 + (z - 5) ** 2) / 4)
            - 0.2 * np.exp(-(x - 4) ** 2 - (y - 7) ** 2 - (z - 5) ** 2))


def _interp_large_workload():
    # a partition-of-unity interpolant (thin-plate spline, linear tail) of N points in
    # the unit cube, fitted and evaluated at M points, against ferreus-rbf's global
    # interpolant (its own fast solver and evaluator); RMSE against the function
    def setup(size):
        X, Xq = _cube(size)
        return {"X": X, "y": _franke3(X), "Xq": Xq, "fq": _franke3(Xq)}

    def ours(a):
        a["ours"] = partition_of_unity(a["X"], a["y"]).predict(a["Xq"])
        return a["ours"]

    def ferreus(a):
        from ferreus_rbf import RBFInterpolator
        from ferreus_rbf.interpolant_config import Drift, InterpolantSettings, RBFKernelType

        settings = InterpolantSettings(RBFKernelType.ThinPlateSpline, drift=Drift.Linear)
        a["ferreus"] = np.asarray(RBFInterpolator(a["X"], a["y"], settings).evaluate(a["Xq"])).reshape(-1)
        return a["ferreus"]

    def accuracy(a):
        def err(key):
            return f"{float(np.sqrt(np.mean((a[key] - a['fq']) ** 2))):.1e}" if key in a else "not run"

        return f"RMSE against the function: fastrbf {err('ours')}, ferreus-rbf {err('ferreus')}"

    cs = [Contender("fastrbf partition_of_unity + predict", FASTRBF, ours),
          optional_peer("ferreus-rbf RBFInterpolator + evaluate", "ferreus_rbf", ferreus, package="ferreus_rbf",
                        full=False, note="quick size only: its fit of 2e4 points takes about 40 s on 2 cores")]
    return Workload("interp-large", setup, lambda a: a["Xq"].shape[0], "evaluations/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=3, Franke-type function, thin-plate spline + linear tail, "
                              f"{a['Xq'].shape[0]} evaluations",
                    sizes=((5000, 5000), (1_000_000, 1_000_000)), accuracy=accuracy)


def _predict_grad_workload():
    # a cubic interpolant (degree-1 tail) of N points in the unit cube, evaluated at M
    # points: values and gradient in one fused pass, against the values alone
    def setup(size):
        X, Xq = _cube(size)
        return {"X": X, "model": interpolate(X, _smooth3(X), kernel="cubic", degree=1), "Xq": Xq}

    cs = [
        Contender("fastrbf predict(return_grad=True)", FASTRBF, lambda a: a["model"].predict(a["Xq"], return_grad=True)),
        Contender("fastrbf predict (values only)", BASELINE, lambda a: a["model"].predict(a["Xq"])),
    ]
    return Workload("predict-grad", setup, lambda a: a["Xq"].shape[0], "evaluations/s", cs,
                    lambda a: f"N={a['model'].centers.shape[0]}, d=3, cubic + degree-1 tail, {a['Xq'].shape[0]} "
                              "evaluations with the gradient vs the values alone",
                    sizes=((4000, 20000), (10000, 50000)))


def _rbfnet_workload():
    gamma, alpha = 0.05, 1e-6

    def setup(size):
        rng = seeded_rng()
        n, k = size
        X = rng.standard_normal((n, 16))
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
        return {"X": X, "y": y, "k": k}

    def ours(a):
        return rbf_network(a["X"], a["y"], n_centers=a["k"], gamma=gamma, alpha=alpha, max_iter=100, seed=0)

    def sk(a):
        import warnings

        from sklearn.cluster import KMeans
        from sklearn.linear_model import Ridge
        from sklearn.metrics.pairwise import rbf_kernel

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            C = KMeans(a["k"], n_init=1, max_iter=100, random_state=0).fit(a["X"]).cluster_centers_
        return Ridge(alpha=alpha).fit(rbf_kernel(a["X"], C, gamma=gamma), a["y"])

    def ref(a):
        rng = np.random.default_rng(0)
        C0 = a["X"][rng.choice(a["X"].shape[0], a["k"], replace=False)]
        C = reference.kmeans(a["X"], C0, max_iter=100)[0]
        return reference.rbf_network(a["X"], a["y"], C, gamma=gamma, alpha=alpha)

    cs = [
        Contender("fastrbf rbf_network", FASTRBF, ours),
        Contender("numpy reference (plain k-means + Phi + solve)", NUMPY, ref, full=False),
    ]
    cs.append(optional_peer("scikit-learn KMeans + rbf_kernel + Ridge", "sklearn.cluster", sk, package="sklearn"))
    return Workload("rbfnet-fit", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, {a['k']} k-means centres, max_iter 100",
                    sizes=((5000, 16), (70000, 64), (1000000, 256)))


def _rbfnet_forward_workload():
    # forward selection (OLS) of K centres among C candidate rows against the brute-force
    # reference (quick size only: C lstsq refits per step) and k-means centres at the same
    # K; the accuracy note says how many k-means centres reach forward selection's error
    gamma, alpha = 0.1, 1e-6

    def f(X):
        return np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 2 * np.exp(-8 * np.sum(X[:, 3:5] ** 2, axis=1))

    def setup(size):
        rng = seeded_rng()
        n, c, k = size
        X = rng.standard_normal((n, 8))
        Xt = rng.standard_normal((10000, 8))
        return {"X": X, "y": f(X) + 0.1 * rng.standard_normal(n), "Xt": Xt, "ft": f(Xt), "c": c, "k": k,
                "cand": X[np.sort(rng.choice(n, c, replace=False))]}

    def ours(a):
        a["model"] = rbf_network(a["X"], a["y"], centers="forward", candidates=a["cand"], n_centers=a["k"], gamma=gamma,
                                 alpha=alpha)
        return a["model"]

    def kmeans_net(a, k):
        return rbf_network(a["X"], a["y"], n_centers=k, gamma=gamma, alpha=alpha, max_iter=100, seed=0)

    def ref(a):
        from threadpoolctl import threadpool_limits

        # K x C small lstsq refits: BLAS threads only add overhead (measured 3 s on one
        # thread, 30-90 s with two on a busy two-core machine)
        with threadpool_limits(limits=1, user_api="blas"):
            sel, _ = reference.rbf_forward(a["X"], a["y"], a["cand"], gamma=gamma, n_centers=a["k"], alpha=alpha)
            return reference.rbf_network(a["X"], a["y"], a["cand"][sel], gamma=gamma, alpha=alpha)

    def accuracy(a):
        def rmse(model):
            return float(np.sqrt(np.mean((model.predict(a["Xt"]) - a["ft"]) ** 2)))

        k = a["k"]
        e_fwd = rmse(a.get("model") or ours(a))
        e_km = {m * k: rmse(kmeans_net(a, m * k)) for m in (1, 2, 4)}
        reach = next((f"{m} k-means centres reach it" for m, e in e_km.items() if e <= e_fwd),
                     f"{4 * k} k-means centres do not reach it")
        return (f"held-out RMSE (to the noiseless function): forward {e_fwd:.4f} with {k} centres; k-means "
                + ", ".join(f"{e:.4f} with {m}" for m, e in e_km.items()) + f"; {reach}")

    cs = [
        Contender("fastrbf rbf_network centers=forward", FASTRBF, ours),
        Contender("numpy reference (brute-force refits, 1-thread BLAS)", NUMPY, ref, full=False),
        Contender("fastrbf rbf_network k-means centres, same K", BASELINE, lambda a: kmeans_net(a, a["k"])),
    ]
    return Workload("rbfnet-forward", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=8, {a['c']} candidates, {a['k']} centres, gaussian gamma "
                              f"{gamma:g}, alpha {alpha:g}", accuracy, sizes=((2000, 200, 20), (100000, 5000, 200)))



def _rmse(p, y):
    return float(np.sqrt(np.mean((p - y) ** 2)))


def _krr_large_workload():
    # Nystroem KRR, solved directly and by Falkon's PCG, on a smooth function of 3 of 16 standard normal
    # coordinates (sd ~0.8) plus noise (sd 0.5).  alpha = lam n (fastrbf's alpha is
    # unscaled; lam is the ridge of the mean loss), the same lam for the exact KRR of the
    # subsample; lam = 1e-5 was the better of 1e-4 / 1e-5 for both at N = 250000.
    gamma, lam, noise = 1.0 / 32, 1e-5, 0.5

    def f(X):
        return np.sin(X[:, 0]) + 0.5 * X[:, 1] * X[:, 2]

    def setup(size):
        rng = seeded_rng()
        n, m, n_sub = size
        X = rng.standard_normal((n, 16))
        y = f(X) + noise * rng.standard_normal(n)
        Xt = rng.standard_normal((10000, 16))
        yt = f(Xt) + noise * rng.standard_normal(10000)
        return {"X": X, "y": y, "m": m, "n_sub": n_sub, "Xt": Xt, "yt": yt, "L": X[rng.choice(n, m, replace=False)]}

    def fit(a, solver):
        a[solver] = kernel_ridge(a["X"], a["y"], gamma=gamma, alpha=lam * a["X"].shape[0], solver=solver,
                                 n_landmarks=a["m"], seed=0)
        return a[solver]

    def ref(a):
        return reference.nystroem_kernel_ridge(a["X"], a["y"], a["L"], gamma=gamma, alpha=lam * a["X"].shape[0])

    def sk(a):
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        phi = Nystroem(gamma=gamma, n_components=a["m"], random_state=0).fit(a["X"])
        a["sk"] = phi, Ridge(alpha=lam * a["X"].shape[0], fit_intercept=False).fit(phi.transform(a["X"]), a["y"])
        return a["sk"]

    def accuracy(a):
        model = a.get("nystrom") or fit(a, "nystrom")
        n_sub = a["n_sub"]
        exact = kernel_ridge(a["X"][:n_sub], a["y"][:n_sub], gamma=gamma, alpha=lam * n_sub, solver="cholesky")
        p_ny, p_ex, ft = model.predict(a["Xt"]), exact.predict(a["Xt"]), f(a["Xt"])
        r_ny, r_ex = (_rmse(p, a["yt"]) for p in (p_ny, p_ex))
        e_ny, e_ex = (_rmse(p, ft) for p in (p_ny, p_ex))
        others = ""
        if "nystrom-pcg" in a:
            cg = a["nystrom-pcg"]
            others += f"; nystrom-pcg {_rmse(cg.predict(a['Xt']), a['yt']):.4f} ({cg.n_iter} CG iterations)"
        if "sk" in a:
            phi, ridge = a["sk"]
            others += f"; scikit-learn {_rmse(ridge.predict(phi.transform(a['Xt'])), a['yt']):.4f}"
        return (f"test RMSE {r_ny:.4f} ({model.solver}) vs exact KRR on {n_sub} points {r_ex:.4f}: "
                f"{r_ny / r_ex:.3f}x (RMSE to the noiseless function {e_ny:.4f} vs {e_ex:.4f}){others}")

    cs = [
        Contender("fastrbf kernel_ridge nystrom", FASTRBF, lambda a: fit(a, "nystrom")),
        Contender("fastrbf kernel_ridge nystrom-pcg", FASTRBF, lambda a: fit(a, "nystrom-pcg"), full=False),
        Contender("numpy reference (explicit K_nm + solve)", NUMPY, ref, full=False),  # 16 GB at full size
    ]
    cs.append(optional_peer("scikit-learn Nystroem + Ridge", "sklearn.kernel_approximation",
                            sk, package="sklearn", full=False))  # 16 GB features at full size
    return Workload("krr-large", setup, lambda a: a["X"].shape[0], "points/s", cs,
                    lambda a: f"N={a['X'].shape[0]}, d=16, M={a['m']}, gaussian gamma {gamma:g}, alpha {lam:g} N",
                    accuracy, sizes=((20000, 500, 2000), (1_000_000, 2000, 20000)))
