"""The ``progress`` argument of the long fits: stderr lines, a logger, a callable."""

import io
import itertools
import logging
import sys
import threading

import dask
import dask.array as da
import numpy as np
import pytest
from helpers import DEPRECATED_GP

import fastrbf
from fastrbf import _progress
from fastrbf import dask as fd
from fastrbf.sklearn import KMeans

pytestmark = pytest.mark.filterwarnings(DEPRECATED_GP)  # the deprecated GP names' tests

KEYS = {"task", "stage", "run", "n_runs", "iter", "max_iter", "elapsed", "eta", "final", "metrics", "message"}


@pytest.fixture
def blobs(rng):
    """Data above the size of the single compiled Lloyd loop (so every iteration is
    reported): 3 blobs of 4000 points in 3-D."""
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 1.0], [0.0, 5.0, 2.0]])
    return np.concatenate([c + rng.standard_normal((4000, 3)) for c in centres])


@pytest.fixture
def regression(rng):
    X = rng.random((3000, 2))
    return X, np.sin(4 * X[:, 0]) + X[:, 1]


@pytest.fixture
def gp_data(rng):
    X = rng.random((30, 1))
    return X, np.sin(6 * X[:, 0]) + 0.05 * rng.standard_normal(30)


class FakeClock:
    """A clock that advances ``step`` seconds per reading."""

    def __init__(self, step):
        self.t = 0.0
        self.step = step

    def __call__(self):
        self.t += self.step
        return self.t


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _lloyd(reports):
    return [r for r in reports if r["stage"] == "lloyd"]


# ---------------------------------------------------------------- off
def test_off_prints_nothing(blobs, regression, gp_data, capsys):
    fastrbf.kmeans(blobs, 3, seed=0)
    fastrbf.kmeans(blobs, 3, seed=0, progress=False)
    fastrbf.kernel_ridge(*regression, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=50, seed=0)
    fastrbf.gp_regression(*gp_data, kernel="gaussian", theta0=[1.0, 10.0], n_restarts=1, seed=0)
    fastrbf.rbf_network(*regression, gamma=2.0, n_centers=5, seed=0, learn_gamma=True, max_gamma_iter=3)
    assert capsys.readouterr() == ("", "")


def test_false_is_the_no_op_reporter():
    assert _progress.reporter(False, "kmeans") is _progress.OFF
    assert _progress.reporter(np.False_, "kmeans") is _progress.OFF


# ---------------------------------------------------------------- stderr
def test_true_writes_lines_to_stderr_and_a_final_one(blobs, capsys, monkeypatch):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.0)  # every report becomes a line
    res = fastrbf.kmeans(blobs, 3, seed=0, max_iter=300, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert "\r" not in err and err.endswith("\n")
    lloyd = [ln for ln in lines if ": iter " in ln]
    assert len(lloyd) == res.n_iter  # one per iteration, the last is the final one
    assert lloyd[0].startswith("kmeans init 1/1: iter 1/300, shift ")
    assert lloyd[-1].startswith(f"kmeans init 1/1: iter {res.n_iter}/300 done, converged, inertia ")
    assert lines[-1] == lloyd[-1]
    assert "ETA" in lloyd[0] and "ETA" not in lloyd[-1]
    assert any(ln.startswith("kmeans init 1/1: k-means++ ") for ln in lines)


def test_lines_are_throttled_to_one_a_second(rng, capsys, monkeypatch):
    clock = FakeClock(0.1)  # every reading of the clock: 0.1 s later
    monkeypatch.setattr(_progress, "_now", clock)
    X = rng.random((12000, 3))  # no clusters: many Lloyd iterations
    reports = []
    fastrbf.kmeans(X, 8, seed=0, tol=0.0, progress=reports.append)
    res = fastrbf.kmeans(X, 8, seed=0, tol=0.0, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(reports) > 30  # enough reports for the throttling to matter
    assert 3 <= len(lines) <= len(reports) / 3
    assert lines[-1].startswith(f"kmeans init 1/1: iter {res.n_iter}/300 done")
    shown = [float(ln.split(", ")[-2 if "ETA" in ln else -1].split()[0]) for ln in lines]
    assert all(b - a >= 1.0 for a, b in itertools.pairwise(shown[:-1]))  # the final line comes anyway


def test_fast_fit_writes_only_its_final_line(capsys):
    X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    res = fastrbf.kmeans(X, 2, seed=0, progress=True)  # one compiled loop: only its end is reported
    assert capsys.readouterr().err.splitlines()[-1].startswith(f"kmeans init 1/1: iter {res.n_iter}/300 done")


def test_terminal_line_is_rewritten_in_place(blobs, monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setattr(_progress, "TTY_INTERVAL", 0.0)
    res = fastrbf.kmeans(blobs, 3, seed=0, n_init=2, progress=True)
    text = term.getvalue()
    assert text.startswith("\r") and text.endswith("\n")
    # one line per init: updates start with \r, each init's final report ends its line
    ends = text.split("\n")[:-1]
    assert len(ends) == 2
    assert all(e.startswith("\r") and e.count("\r") > 3 for e in ends)
    assert ends[1].rsplit("\r", 1)[1].startswith("kmeans init 2/2: iter ")
    assert "init 1/2" in ends[0] and "init 2/2" not in ends[0]
    assert res.n_iter >= 1


# ---------------------------------------------------------------- logger
def test_logger_gets_info_records(regression, caplog, monkeypatch):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.0)
    log = logging.getLogger("fastrbf.test.progress")
    with caplog.at_level(logging.INFO, logger="fastrbf.test.progress"):
        m = fastrbf.kernel_ridge(*regression, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=50, seed=0,
                                 progress=log)
    recs = [r for r in caplog.records if r.name == "fastrbf.test.progress"]
    assert len(recs) == m.n_iter
    assert all(r.levelno == logging.INFO and "\r" not in r.getMessage() for r in recs)
    assert recs[0].getMessage().startswith("kernel_ridge: CG iter 1/100, residual ")
    assert recs[-1].getMessage().startswith(f"kernel_ridge: CG iter {m.n_iter}/100 done, residual ")


def test_logger_adapter_is_accepted(blobs, caplog):
    adapter = logging.LoggerAdapter(logging.getLogger("fastrbf.test.adapter"), {})
    with caplog.at_level(logging.INFO, logger="fastrbf.test.adapter"):
        res = fastrbf.kmeans(blobs, 3, seed=0, progress=adapter)
    assert caplog.records[-1].getMessage().startswith(f"kmeans init 1/1: iter {res.n_iter}/300 done")


# ---------------------------------------------------------------- callable
def test_callable_gets_dicts_with_the_documented_keys(blobs):
    reports = []
    res = fastrbf.kmeans(blobs, 3, seed=0, n_init=2, progress=reports.append)
    assert reports and all(set(r) == KEYS for r in reports)
    assert {r["task"] for r in reports} == {"kmeans"}
    assert {r["stage"] for r in reports} == {"k-means++", "lloyd"}
    for run in (1, 2):
        mine = [r for r in reports if r["run"] == run]
        assert all(r["n_runs"] == 2 for r in mine)
        seeding = [r for r in mine if r["stage"] == "k-means++"]
        assert [r["iter"] for r in seeding] == [1, 2, 3] and seeding[-1]["final"]
        lloyd = _lloyd(mine)
        n = lloyd[-1]["iter"]
        assert [r["iter"] for r in lloyd] == list(range(1, n + 1))
        assert [r["final"] for r in lloyd] == [False] * (n - 1) + [True]
        assert all(r["max_iter"] == 300 for r in lloyd)
        assert all(set(r["metrics"]) == {"shift"} for r in lloyd[:-1])
        assert set(lloyd[-1]["metrics"]) == {"converged", "inertia"}
    elapsed = [r["elapsed"] for r in reports]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0
    assert all(r["message"].startswith(f"kmeans init {r['run']}/2: ") for r in reports)
    # the kept init's report has the result's iterations and inertia
    ends = [r for r in _lloyd(reports) if r["final"]]
    best = min(ends, key=lambda r: r["metrics"]["inertia"])
    assert best["iter"] == res.n_iter and best["metrics"]["inertia"] == res.inertia


@pytest.mark.parametrize("max_iter", [1, 3])
def test_kmeans_stopped_by_max_iter_reports_each_iteration_once(rng, max_iter):
    X = rng.random((12000, 3))
    reports = []
    res = fastrbf.kmeans(X, 8, seed=0, tol=0.0, max_iter=max_iter, progress=reports.append)
    lloyd = _lloyd(reports)
    assert res.n_iter == max_iter and not res.converged
    assert [(r["iter"], r["final"]) for r in lloyd] == [(i, i == max_iter) for i in range(1, max_iter + 1)]
    reports = []
    with dask.config.set(scheduler="threads"):
        res = fd.kmeans(da.from_array(X, chunks=(5000, 3)), 8, seed=0, tol=0.0, max_iter=max_iter,
                        progress=reports.append)
    lloyd = _lloyd(reports)
    assert [(r["iter"], r["final"]) for r in lloyd] == [(i, i == max_iter) for i in range(1, max_iter + 1)]


def test_kernel_ridge_stopped_by_max_iter_reports_each_iteration_once(regression):
    reports = []
    with pytest.warns(fastrbf.ConvergenceWarning):
        m = fastrbf.kernel_ridge(*regression, gamma=2.0, alpha=1e-8, solver="nystrom-pcg", n_landmarks=50, seed=0,
                                 max_iter=3, progress=reports.append)
    assert m.n_iter == 3 and [(r["iter"], r["final"]) for r in reports] == [(1, False), (2, False), (3, True)]


def test_kmeans_small_problem_reports_its_end(rng):
    X = rng.random((50, 2))
    reports = []
    res = fastrbf.kmeans(X, 3, seed=0, progress=reports.append)
    lloyd = _lloyd(reports)
    assert len(lloyd) == 1 and lloyd[0]["final"] and lloyd[0]["iter"] == res.n_iter


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kmeans_reports_in_the_units_of_the_data(blobs, dtype):
    """The data are scaled inside when their squares could overflow: the reported shift
    and inertia are those of the caller's data."""
    reports = []
    X = (blobs * 1e30).astype(dtype)
    res = fastrbf.kmeans(X, 3, seed=0, progress=reports.append)
    final = _lloyd(reports)[-1]
    assert final["metrics"]["inertia"] == res.inertia
    assert _lloyd(reports)[0]["metrics"]["shift"] > 1e55


def test_callable_exception_ends_the_fit(blobs):
    def stop(info):
        if info["stage"] == "lloyd" and info["iter"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fastrbf.kmeans(blobs, 3, seed=0, progress=stop)


def test_kernel_ridge_reports_cg_iterations(regression):
    reports = []
    m = fastrbf.kernel_ridge(*regression, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=50, seed=0,
                             progress=reports.append)
    assert [r["iter"] for r in reports] == list(range(1, m.n_iter + 1))
    assert {(r["task"], r["stage"]) for r in reports} == {("kernel_ridge", "cg")}
    assert reports[-1]["final"] and reports[-1]["metrics"] == {"residual": m.residual, "converged": m.converged}
    assert all(r["max_iter"] == 100 for r in reports)


def test_kernel_ridge_kmeans_landmarks_report_their_kmeans(regression):
    reports = []
    m = fastrbf.kernel_ridge(*regression, gamma=2.0, alpha=1e-3, solver="nystrom-pcg", n_landmarks=20,
                             landmarks="kmeans", seed=0, progress=reports.append)
    tasks = [r["task"] for r in reports]
    assert tasks[0] == "kernel_ridge kmeans" and tasks[-1] == "kernel_ridge"
    assert {r["stage"] for r in reports if r["task"] == "kernel_ridge kmeans"} == {"k-means++", "lloyd"}
    assert reports[-1]["iter"] == m.n_iter


def test_kernel_ridge_cholesky_reports_nothing(capsys):
    X = np.linspace(0, 1, 20)[:, None]
    reports = []
    fastrbf.kernel_ridge(X, X[:, 0], gamma=1.0, alpha=0.1, solver="cholesky", progress=reports.append)
    fastrbf.kernel_ridge(X, X[:, 0], gamma=1.0, alpha=0.1, solver="cholesky", progress=True)
    assert reports == [] and capsys.readouterr().err == ""


def test_gp_reports_each_start(gp_data):
    reports = []
    m = fastrbf.gp_regression(*gp_data, kernel="gaussian", theta0=[1.0, 10.0], n_restarts=2, seed=0,
                              progress=reports.append)
    assert {(r["task"], r["stage"], r["n_runs"], r["max_iter"]) for r in reports} == {
        ("gp_regression", "l-bfgs-b", 3, None)}
    for i, row in enumerate(m.restarts):
        mine = [r for r in reports if r["run"] == i + 1]
        assert [r["iter"] for r in mine[:-1]] == list(range(1, len(mine)))
        assert mine[-1]["final"] and mine[-1]["iter"] == row["n_iter"]
        assert mine[-1]["metrics"] == {"lml": row["lml"], "converged": row["converged"]}
    assert reports[-1]["message"].startswith("gp_regression start 3/3: iter ")


def test_gp_eta_comes_from_the_finished_starts(gp_data, monkeypatch):
    monkeypatch.setattr(_progress, "_now", FakeClock(1.0))
    reports = []
    fastrbf.gp_regression(*gp_data, kernel="gaussian", theta0=[1.0, 10.0], n_restarts=2, seed=0,
                          progress=reports.append)
    first = [r for r in reports if r["run"] == 1 and not r["final"]]
    assert first and all(r["eta"] is None for r in first)  # no finished start yet
    later = [r for r in reports if r["run"] > 1 and not r["final"]]
    assert later and all(r["eta"] is not None and r["eta"] >= 0 for r in later)
    assert reports[-1]["eta"] == 0.0


def test_gp_without_optimiser_reports_nothing(gp_data):
    reports = []
    fastrbf.gp_regression(*gp_data, kernel="gaussian", theta0=[1.0, 10.0], optimize=False, progress=reports.append)
    assert reports == []


def test_rbf_network_reports_kmeans_and_width_steps(regression):
    reports = []
    net = fastrbf.rbf_network(*regression, gamma=2.0, n_centers=5, seed=0, learn_gamma=True, per_center=True,
                              max_gamma_iter=4, progress=reports.append)
    kmeans = [r for r in reports if r["task"] == "rbf_network kmeans"]
    steps = [r for r in reports if r["task"] == "rbf_network"]
    assert kmeans and {r["stage"] for r in steps} == {"gamma"}
    ends = [r for r in steps if r["final"]]
    assert len(ends) == 2  # the common width, then one per centre
    assert sum(r["iter"] for r in ends) == len(net.error_history) - 1
    assert ends[-1]["metrics"]["error"] == net.error_history[-1]


# ---------------------------------------------------------------- ETA
def test_eta_is_the_time_per_iteration_times_the_iterations_left(monkeypatch):
    clock = FakeClock(0.0)  # set by hand
    monkeypatch.setattr(_progress, "_now", clock)
    reports = []
    rep = _progress.reporter(reports.append, "demo", runs="run")
    rep.runs(2)
    rep.run(1)
    rep.start("loop", 10)
    for t, done in ((1.0, 1), (2.0, 2)):
        clock.t = t
        rep.step(done)
    clock.t = 4.0
    rep.finish(4)
    rep.run(2)
    rep.start("loop", 10)
    clock.t = 5.0
    rep.step(1)
    clock.t = 7.0
    rep.finish(3)
    # 1 s per iteration: 9 left, plus run 2 at the projected length of run 1 (1 s + 9 s);
    # then 8 left at 1 s each, run 2 as 2 + 8 s; at the end of run 1 run 2 is expected
    # to take as long as run 1 (4 s); in run 2, 9 iterations left at 1 s
    assert [r["eta"] for r in reports] == [19.0, 18.0, 4.0, 9.0, 0.0]
    assert [r["elapsed"] for r in reports] == [1.0, 2.0, 4.0, 5.0, 7.0]
    assert reports[1]["message"] == "demo run 1/2: iter 2/10, 2.0 s, ETA 18 s"
    assert reports[-1]["message"] == "demo run 2/2: iter 3/10 done, 7.0 s"


def test_eta_without_iteration_bound_uses_the_finished_runs(monkeypatch):
    clock = FakeClock(0.0)
    monkeypatch.setattr(_progress, "_now", clock)
    reports = []
    rep = _progress.reporter(reports.append, "demo", runs="start")
    rep.runs(3)
    rep.run(1)
    rep.start("opt")
    clock.t = 1.0
    rep.step(1)
    clock.t = 4.0
    rep.finish(5)
    rep.run(2)
    rep.start("opt")
    clock.t = 5.0
    rep.step(1, lml=-1.5)
    assert reports[0]["eta"] is None and reports[0]["message"] == "demo start 1/3: iter 1, 1.0 s"
    # 4 s per start: 3 s left of this one, 4 s for the third
    assert reports[-1]["eta"] == 7.0
    assert reports[-1]["message"] == "demo start 2/3: iter 1, lml -1.5, 5.0 s, ETA 7.0 s"


def test_reporter_passed_down_is_kept():
    reports = []
    rep = _progress.reporter(reports.append, "dask.kernel_ridge")
    assert _progress.own(rep, "falkon_solve") is rep
    assert _progress.reporter(rep, "kmeans", runs="init").task == "dask.kernel_ridge kmeans"
    assert _progress.reporter(rep, "dask.kmeans").task == "dask.kernel_ridge kmeans"


# ---------------------------------------------------------------- results unchanged
def test_results_bitwise_the_same_with_progress(blobs, regression, gp_data, capsys):
    sink = []
    for progress in (True, sink.append, logging.getLogger("fastrbf.test.quiet")):
        a = fastrbf.kmeans(blobs, 3, seed=0, n_init=2)
        b = fastrbf.kmeans(blobs, 3, seed=0, n_init=2, progress=progress)
        assert a.centers.tobytes() == b.centers.tobytes() and np.array_equal(a.labels, b.labels)
        assert (a.inertia, a.n_iter, a.converged) == (b.inertia, b.n_iter, b.converged)
    kw = {"gamma": 2.0, "alpha": 1e-3, "solver": "nystrom-pcg", "n_landmarks": 50, "seed": 0}
    a, b = fastrbf.kernel_ridge(*regression, **kw), fastrbf.kernel_ridge(*regression, **kw, progress=True)
    assert a.weights.tobytes() == b.weights.tobytes() and (a.n_iter, a.residual) == (b.n_iter, b.residual)
    kw = {"kernel": "gaussian", "theta0": [1.0, 10.0], "n_restarts": 2, "seed": 0}
    a, b = fastrbf.gp_regression(*gp_data, **kw), fastrbf.gp_regression(*gp_data, **kw, progress=sink.append)
    assert a.theta.tobytes() == b.theta.tobytes() and a.alpha.tobytes() == b.alpha.tobytes()
    assert [r["n_iter"] for r in a.restarts] == [r["n_iter"] for r in b.restarts]
    kw = {"gamma": 2.0, "n_centers": 5, "seed": 0, "learn_gamma": True, "max_gamma_iter": 3}
    a, b = fastrbf.rbf_network(*regression, **kw), fastrbf.rbf_network(*regression, **kw, progress=True)
    assert a.weights.tobytes() == b.weights.tobytes() and a.gamma.tobytes() == b.gamma.tobytes()
    capsys.readouterr()


def test_calls_on_threads_keep_their_own_reports(rng):
    """No state is shared between calls: concurrent fits report only their own loop."""
    data = [rng.standard_normal((10000, 2)) + 3 * k for k in range(3)]
    reports: list[list] = [[] for _ in data]
    results = [None] * len(data)

    def fit(i):
        results[i] = fastrbf.kmeans(data[i], 4, seed=i, n_threads=1, progress=reports[i].append)

    threads = [threading.Thread(target=fit, args=(i,)) for i in range(len(data))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for res, mine in zip(results, reports, strict=True):
        lloyd = _lloyd(mine)
        assert [r["iter"] for r in lloyd] == list(range(1, res.n_iter + 1))
        assert lloyd[-1]["metrics"]["inertia"] == res.inertia


# ---------------------------------------------------------------- validation
BAD = [1, 0, None, "yes", 2.0, [print]]


@pytest.mark.parametrize("bad", BAD)
def test_bad_progress_is_a_type_error(bad, gp_data, regression):
    match = r"`progress` must be True, False, a logging.Logger or a callable taking a dict; got "
    X = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(TypeError, match=match):
        fastrbf.kmeans(X, 2, progress=bad)
    with pytest.raises(TypeError, match=match):
        fastrbf.kernel_ridge(X, [0.0, 1.0, 0.0], gamma=1.0, alpha=0.1, progress=bad)
    with pytest.raises(TypeError, match=match):
        fastrbf.kernel_ridge(X, [0.0, 1.0, 0.0], gamma=1.0, alpha=0.1, solver="nystrom-pcg", progress=bad)
    with pytest.raises(TypeError, match=match):
        fastrbf.gp_regression(*gp_data, progress=bad)
    with pytest.raises(TypeError, match=match):
        fastrbf.rbf_network(X, [0.0, 1.0, 0.0], gamma=1.0, n_centers=2, progress=bad)


@pytest.mark.parametrize("bad", [1, None])
def test_bad_progress_is_refused_before_any_dask_task(bad, no_tasks):
    X = da.from_array(np.array([[0.0], [1.0], [2.0], [3.0]]), chunks=(2, 1))
    match = r"`progress` must be True, False, a logging.Logger or a callable taking a dict; got "
    with pytest.raises(TypeError, match=match):
        fd.kmeans(X, 2, progress=bad)
    with pytest.raises(TypeError, match=match):
        fd.kernel_ridge(X, np.zeros(4), gamma=1.0, alpha=0.1, n_landmarks=2, progress=bad)
    with pytest.raises(TypeError, match=match):
        fd.rbf_network(X, np.zeros(4), gamma=1.0, n_centers=2, progress=bad)


@pytest.fixture
def no_tasks():
    def refuse(*args, **kwargs):
        raise AssertionError("a task graph was submitted")

    with dask.config.set(scheduler=refuse):
        yield


# ---------------------------------------------------------------- dask
def test_dask_kmeans_reports_its_iterations(blobs):
    reports = []
    X = da.from_array(blobs, chunks=(3000, 3))
    with dask.config.set(scheduler="threads"):
        res = fd.kmeans(X, 3, seed=0, progress=reports.append)
        ref = fd.kmeans(X, 3, seed=0)
    assert {r["task"] for r in reports} == {"dask.kmeans"}
    rounds = [r for r in reports if r["stage"] == "k-means||"]
    assert [(r["iter"], r["final"]) for r in rounds] == [(i, i == len(rounds)) for i in range(1, len(rounds) + 1)]
    assert len(rounds) >= 5  # init_rounds
    lloyd = _lloyd(reports)
    assert [r["iter"] for r in lloyd] == list(range(1, res.n_iter + 1)) and lloyd[-1]["final"]
    assert lloyd[-1]["metrics"] == {"converged": res.converged, "inertia": res.inertia}
    assert res.centers.tobytes() == ref.centers.tobytes() and res.inertia == ref.inertia


def test_dask_kernel_ridge_and_rbf_network_report(regression, capsys, monkeypatch):
    monkeypatch.setattr(_progress, "LINE_INTERVAL", 0.0)
    X, y = regression
    Xd = da.from_array(X, chunks=(1000, 2))
    reports = []
    with dask.config.set(scheduler="threads"):
        m = fd.kernel_ridge(Xd, y, gamma=2.0, alpha=1e-3, n_landmarks=50, seed=0, progress=reports.append)
        net = fd.rbf_network(Xd, y, gamma=2.0, n_centers=4, seed=0, progress=True)
    assert [r["iter"] for r in reports] == list(range(1, m.n_iter + 1))
    assert {(r["task"], r["stage"]) for r in reports} == {("dask.kernel_ridge", "cg")}
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(ln.startswith("dask.rbf_network kmeans init 1/1: ") for ln in lines)
    assert lines[-1].split(": ")[1].startswith("iter ") and " done" in lines[-1]
    assert net.centers.shape == (4, 2)


# ---------------------------------------------------------------- scikit-learn
def test_sklearn_kmeans_verbose(blobs, capsys):
    a = KMeans(3, random_state=0).fit(blobs)
    assert capsys.readouterr().err == ""
    b = KMeans(3, random_state=0, verbose=1).fit(blobs)
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"kmeans init 1/1: iter {b.n_iter_}/300 done")
    assert a.cluster_centers_.tobytes() == b.cluster_centers_.tobytes()


@pytest.mark.parametrize(("verbose", "exc", "match"), [
    ("yes", TypeError, r"`verbose` must be an int >= 0; got 'yes'\."),
    (1.5, TypeError, r"`verbose` must be an int >= 0; got 1\.5\."),
    (-1, ValueError, r"`verbose` must be an int >= 0; got -1\."),
])
def test_sklearn_kmeans_bad_verbose(blobs, verbose, exc, match):
    with pytest.raises(exc, match=match):
        KMeans(3, verbose=verbose).fit(blobs)
