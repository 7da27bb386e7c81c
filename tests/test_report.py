"""The benchmark report: timing in rounds, verdicts, the table, ``--compare``, ``--plot``
and ``--from`` of ``python -m fastrbf.bench``.

Synthetic rows test the verdict and comparison rules and the table's layout; one tiny
real run (one workload, one timed round) tests the whole path from a run to the figure,
and one compile target is timed in fresh processes."""

import json
import os
import pathlib
import struct
import subprocess
import sys

import pytest

import fastrbf
from fastrbf import bench
from fastrbf.bench import figure, harness, report, suite, workloads
from fastrbf.bench.workloads import cluster


def _row(workload, contender, median_s, kind="fastrbf", shape="10x2", throughput=None):
    return dict(workload=workload, contender=contender, kind=kind, shape=shape, unit="pairs/s", median_s=median_s,
                throughput=(throughput if throughput is not None else (100.0 / median_s if median_s else None)),
                note="" if median_s else "skipped at full size (too slow)", dtype="float64",
                ratio_vs_numpy=None, ratio_vs_best_peer=None, ratio_vs_floor=None, peak_mem_bytes=None,
                threads=2, blas="openblas Haswell x2")


OLD = [_row("a", "fastrbf", 1.0), _row("a", "numpy reference", 10.0, "numpy"), _row("a", "peer", 2.0, "peer"),
       _row("b", "fastrbf", 0.5), _row("b", "gone", 0.1), _row("c", "fastrbf", None), _row("d", "fastrbf", 1.0)]
NEW = [_row("a", "fastrbf", 1.25), _row("a", "numpy reference", 10.5, "numpy"), _row("a", "peer", 1.0, "peer"),
       _row("b", "fastrbf", 0.5), _row("b", "added", 0.2), _row("c", "fastrbf", 3.0),
       _row("d", "fastrbf", 9.0, shape="1000x2")]


def _write(path, rows):
    path.write_text(json.dumps(rows))
    return str(path)


def _png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    return struct.unpack(">II", head[16:24])


# ---------------------------------------------------------------- compare
def test_compare_statuses_and_changes():
    res = {(r["workload"], r["contender"]): r for r in report.compare(OLD, NEW, threshold=10)}
    assert len(res) == len({(r["workload"], r["contender"]) for r in OLD + NEW})
    for (w, c), r in res.items():
        old = next((o for o in OLD if (o["workload"], o["contender"]) == (w, c)), None)
        new = next((n for n in NEW if (n["workload"], n["contender"]) == (w, c)), None)
        assert r["old_s"] == (old["median_s"] if old else None)
        assert r["new_s"] == (new["median_s"] if new else None)
        if r["change_pct"] is not None:
            assert r["change_pct"] == pytest.approx(100 * (new["median_s"] / old["median_s"] - 1))
    assert res[("a", "fastrbf")]["status"] == "REGRESSION"  # +25%
    assert res[("a", "numpy reference")]["status"] == "same"  # +5%
    assert res[("a", "peer")]["status"] == "peer faster"  # -50%: the machine, not fastrbf
    assert res[("b", "fastrbf")]["status"] == "same"
    assert res[("b", "gone")]["status"] == "only in old"
    assert res[("b", "added")]["status"] == "only in new"
    assert res[("c", "fastrbf")]["status"] == "not measured"
    assert res[("d", "fastrbf")]["status"] == "size differs"  # 9x slower, but not the same size


def test_compare_threshold_moves_the_line():
    pct = {r["contender"]: r["status"] for r in report.compare(OLD[:3], NEW[:3], threshold=30)}
    assert pct == {"fastrbf": "same", "numpy reference": "same", "peer": "peer faster"}
    pct = {r["contender"]: r["status"] for r in report.compare(OLD[:3], NEW[:3], threshold=0)}
    assert pct == {"fastrbf": "REGRESSION", "numpy reference": "peer slower", "peer": "peer faster"}


def test_compare_order_new_then_old_only():
    res = report.compare(OLD, NEW)
    keys = [(r["workload"], r["contender"]) for r in res]
    assert keys[: len(NEW)] == [(r["workload"], r["contender"]) for r in NEW]
    assert keys[len(NEW):] == [("b", "gone")]


def _spread_row(median, q1, q3, contender="fastrbf"):
    return dict(_row("w", contender, median), q1_s=q1, q3_s=q3)


def test_compare_beyond_threshold_but_within_noise_is_no_regression():
    old = [_spread_row(1.0, 0.8, 1.3)]
    new = [_spread_row(1.5, 1.2, 1.9)]  # +50%, far beyond 10%, but 1.2 < 1.3: the ranges overlap
    res = report.compare(old, new, threshold=10)
    assert [(r["status"], round(r["change_pct"])) for r in res] == [("within noise", 50)]
    faster = report.compare(new, old, threshold=10)  # -33%, the same overlap
    assert faster[0]["status"] == "within noise"


def test_compare_beyond_threshold_and_noise_is_a_regression():
    old = [_spread_row(1.0, 0.95, 1.05)]
    new = [_spread_row(1.5, 1.4, 1.6)]
    assert report.compare(old, new, threshold=10)[0]["status"] == "REGRESSION"
    assert report.compare(new, old, threshold=10)[0]["status"] == "faster"
    # beyond the noise but within the threshold: not a regression
    assert report.compare(old, new, threshold=60)[0]["status"] == "same"


def test_compare_one_side_without_spread_uses_the_threshold():
    """A row saved by an older version (no quartiles) against a new one: the threshold alone."""
    old = [_row("w", "fastrbf", 1.0)]
    new = [_spread_row(1.5, 1.0, 2.0)]
    assert report.compare(old, new, threshold=10)[0]["status"] == "REGRESSION"


def test_cli_fail_on_regression_only_beyond_noise(tmp_path, capsys):
    old = _write(tmp_path / "old.json", [_spread_row(1.0, 0.8, 1.3)])
    noisy = _write(tmp_path / "noisy.json", [_spread_row(1.5, 1.2, 1.9)])
    assert bench.main(["--from", noisy, "--compare", old, "--fail-on-regression"])[0]["median_s"] == 1.5
    assert "0 regressions" in capsys.readouterr().out
    clear = _write(tmp_path / "clear.json", [_spread_row(1.5, 1.4, 1.6)])
    with pytest.raises(SystemExit) as exc:
        bench.main(["--from", clear, "--compare", old, "--fail-on-regression"])
    assert exc.value.code == 1
    capsys.readouterr()


def test_compare_matches_rows_by_size():
    """A run over several sizes against one over one size: the same size is compared,
    the other sizes are listed on their own."""
    old = [_row("w", "fastrbf", 1.0, shape="N=10")]
    new = [_row("w", "fastrbf", 1.05, shape="N=10"), _row("w", "fastrbf", 9.0, shape="N=100")]
    res = report.compare(old, new)
    assert [r["status"] for r in res] == ["same", "only in new"]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "10", True, None])
def test_compare_bad_threshold(bad):
    with pytest.raises(ValueError, match=r"`threshold` must be a finite number >= 0"):
        report.compare(OLD, NEW, threshold=bad)


def test_format_compare_lists_every_row_and_counts():
    res = report.compare(OLD, NEW, threshold=10)
    text = report.format_compare(res, threshold=10)
    lines = text.splitlines()
    assert len(lines) == 2 + len(res) + 2
    assert sum("REGRESSION" in ln for ln in lines[2:-2]) == 1
    assert "+25.0%" in text and "-50.0%" in text
    assert lines[-2] == ("1 regression (> 10% slower, beyond the noise of both runs), 0 faster, 0 within noise, "
                         "2 within 10%; 4 not comparable")
    assert lines[-1].startswith("0 other row(s) slower and 1 faster beyond the noise")


# ---------------------------------------------------------------- load_rows
def test_load_rows_round_trip(tmp_path):
    assert report.load_rows(_write(tmp_path / "r.json", NEW)) == NEW


def test_save_and_load_run_round_trip(tmp_path):
    rows = [dict(r, q1_s=r["median_s"], q3_s=r["median_s"], verdict="faster", load_before=[0.5, 0.4, 0.3])
            for r in NEW]
    meta = {"load_before": [0.5, 0.4, 0.3], "load_after": [2.5, 1.0, 0.4], "cores": 2}
    path = tmp_path / "run.json"
    report.save_run(path, rows, meta)
    assert report.load_run(path) == (meta, rows)
    assert report.load_rows(path) == rows


def test_old_json_without_new_fields_is_read_and_shown(tmp_path, capsys):
    """A bare list of rows (an older version's --json) reads back with an empty header,
    and its table shows "-" where the spread and verdict are missing."""
    old_style = [{k: v for k, v in r.items() if k not in ("ratio_vs_floor",)} for r in OLD]
    path = _write(tmp_path / "old.json", old_style)
    assert report.load_run(path) == ({}, old_style)
    assert bench.main(["--from", path]) == old_style
    out = capsys.readouterr().out
    assert "[1] a" in out and "time min / median" in out


def test_load_rows_rejects_other_json(tmp_path):
    with pytest.raises(ValueError, match=r"must hold a benchmark run as written by"):
        report.load_rows(_write(tmp_path / "r.json", {"rows": NEW}))
    with pytest.raises(ValueError, match=r"must hold a benchmark run as written by"):
        report.load_rows(_write(tmp_path / "r.json", [{"workload": "a"}]))
    with pytest.raises(ValueError, match=r"must hold a benchmark run as written by"):
        report.load_rows(_write(tmp_path / "r.json", {"format": report.FORMAT, "rows": {"a": 1}}))
    (tmp_path / "bad.json").write_text("not json")
    with pytest.raises(ValueError, match=r"is not a JSON file of benchmark rows"):
        report.load_rows(str(tmp_path / "bad.json"))


# ---------------------------------------------------------------- plot
def test_plot_writes_png(tmp_path):
    out = tmp_path / "r.png"
    assert figure.plot(NEW, out, baseline=OLD, title="t") == str(out)
    w, h = _png_size(out)
    assert w > 800 and h > 400


def test_plot_one_panel_per_workload(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    seen = {}
    real_close = plt.close

    from matplotlib.collections import PathCollection

    def close(fig):  # look at the figure before it is closed
        axes = [ax for ax in fig.axes if ax.get_visible()]
        seen["titles"] = [ax.get_title(loc="left") for ax in axes]
        seen["bars"] = [len(ax.patches) for ax in axes]
        seen["xscale"] = {ax.get_xscale() for ax in axes}
        seen["ticks"] = [sorted(float(x) for c in ax.collections if isinstance(c, PathCollection)
                                for x, _ in c.get_offsets()) for ax in axes]
        real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    figure.plot(NEW, tmp_path / "r.svg", ncols=3, baseline=OLD)
    workloads = list(dict.fromkeys(r["workload"] for r in NEW))
    assert [t.split()[1].rstrip(":") for t in seen["titles"]] == workloads
    assert seen["bars"] == [sum(r["workload"] == w and r["median_s"] is not None for r in NEW) for w in workloads]
    assert seen["xscale"] == {"log"}
    # baseline ticks: the old median time of rows measured on both sides at the same size
    old = {(r["workload"], r["contender"]): r for r in OLD}
    for w, ticks in zip(workloads, seen["ticks"], strict=True):
        want = sorted(old[w, r["contender"]]["median_s"] for r in NEW
                      if r["workload"] == w and r["median_s"] and old.get((w, r["contender"]), {}).get("median_s")
                      and old[w, r["contender"]]["shape"] == r["shape"])
        assert ticks == pytest.approx(want)
    assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")


def test_plot_errors(tmp_path):
    with pytest.raises(ValueError, match=r"`rows` must hold at least one benchmark row"):
        figure.plot([], tmp_path / "r.png")
    with pytest.raises(ValueError, match=r"`ncols` must be an int >= 1; got 0"):
        figure.plot(NEW, tmp_path / "r.png", ncols=0)
    with pytest.raises(ValueError, match=r"`threshold` must be a finite number >= 0"):
        figure.plot(NEW, tmp_path / "r.png", threshold=-5)
    assert not (tmp_path / "r.png").exists()


def test_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    with pytest.raises(ImportError, match=r"pip install fastrbf\[bench\]"):
        figure.plot(NEW, tmp_path / "r.png")
    with pytest.raises(SystemExit) as exc:
        bench.main(["--from", _write(tmp_path / "new.json", NEW), "--plot", str(tmp_path / "r.png")])
    assert exc.value.code == 2
    assert not (tmp_path / "r.png").exists()


# ---------------------------------------------------------------- the command line
def test_cli_from_compare_plot(tmp_path, capsys):
    new, old = _write(tmp_path / "new.json", NEW), _write(tmp_path / "old.json", OLD)
    png = tmp_path / "r.png"
    rows = bench.main(["--from", new, "--compare", old, "--plot", str(png)])
    assert rows == NEW
    text = capsys.readouterr().out
    assert "REGRESSION" in text and "only in old" in text and "size differs" in text
    assert f"figure written to {png}" in text
    _png_size(png)


def test_cli_fail_on_regression(tmp_path, capsys):
    new, old = _write(tmp_path / "new.json", NEW), _write(tmp_path / "old.json", OLD)
    with pytest.raises(SystemExit) as exc:
        bench.main(["--from", new, "--compare", old, "--fail-on-regression"])
    assert exc.value.code == 1
    # the same rows with a looser threshold: no regression, normal return
    assert bench.main(["--from", new, "--compare", old, "--fail-on-regression", "--threshold", "30"]) == NEW
    # without the flag the exit status is unchanged
    assert bench.main(["--from", new, "--compare", old]) == NEW
    capsys.readouterr()


def test_cli_only_filters_saved_rows(tmp_path, capsys):
    rows = bench.main(["--from", _write(tmp_path / "new.json", NEW), "--only", "b"])
    assert rows == [r for r in NEW if r["workload"] == "b"]
    capsys.readouterr()


@pytest.mark.parametrize("argv, match", [
    (["--from", "X", "--full"], r"--from reports on a saved run"),
    (["--from", "X", "--repeats", "2"], r"--from reports on a saved run"),
    (["--from", "X", "--threads", "1"], r"--from reports on a saved run: --full, --repeats and --threads"),
    (["--threads", "0"], r"--threads: must be an int >= 1; got '0'"),
    (["--fail-on-regression"], r"--fail-on-regression needs --compare"),
    (["--threshold", "-1"], r"--threshold: must be a finite number >= 0"),
    (["--threshold", "abc"], r"--threshold: must be a finite number >= 0"),
    (["--from", "{missing}"], r"--from: .*No such file"),
    (["--compare", "{bad}"], r"--compare: .*must hold a benchmark run as written by"),
    (["--from", "{new}", "--only", "zzz", "--plot", "r.png"], r"--plot: no benchmark rows to draw"),
    (["--from", "{comp}", "--plot", "r.png"], r"--plot: no benchmark rows to draw .*the compile rows are not drawn"),
])
def test_cli_errors(tmp_path, capsys, argv, match):
    paths = dict(missing=str(tmp_path / "missing.json"), bad=_write(tmp_path / "bad.json", {"a": 1}),
                 new=_write(tmp_path / "new.json", NEW),
                 comp=_write(tmp_path / "comp.json", [dict(workload="compile", contender="sqdist", kind="compile",
                                                           median_s=1.0)]))
    argv = [a.format(**paths) for a in argv]
    with pytest.raises(SystemExit) as exc:
        bench.main(argv)
    assert exc.value.code == 2
    import re

    assert re.search(match, capsys.readouterr().err)


def test_real_run_json_compare_plot(tmp_path, capsys):
    """One tiny real run: written, drawn, then a saved copy made 2x slower shows as a
    regression and one 2x faster as faster.  The run is a subprocess, as a user runs
    it: the benchmark module imports faiss, whose own OpenBLAS would otherwise join this
    test process after fastrbf's thread controller was made."""
    run = tmp_path / "run.json"
    env = dict(os.environ)
    pkg_parent = str(pathlib.Path(fastrbf.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, "-m", "fastrbf.bench", "--only", "sqdist-lowd/float32", "--repeats", "1",
                           "--json", str(run), "--plot", str(tmp_path / "run.png")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"figure written to {tmp_path / 'run.png'}" in proc.stdout
    assert "load average (1, 5, 15 min) before:" in proc.stdout and "load average after:" in proc.stdout
    # progress: the cache state before the first workload, then a line per workload
    progress = proc.stderr.splitlines()
    first = next(i for i, ln in enumerate(progress) if ln.startswith("[1/1] sqdist-lowd/float32 ("))
    assert "left" in progress[first]
    assert any("kernels" in ln and "cache" in ln for ln in progress[:first])
    meta, rows = report.load_run(run)
    assert len(meta["load_before"]) == 3 and len(meta["load_after"]) == 3 and meta["cores"] == os.cpu_count()
    # the roofline: the floors in the header and the JSON, each row's fraction of its workload's binding floor
    assert "floors (" in proc.stdout and "peak mem  floor" in proc.stdout
    assert meta["floors"]["sgemm_gflops"] > 0 and meta["floors"]["write_gbs"] > 0
    assert all(r["floor_bound"] in ("flop", "mem") and r["floor_fraction"] > 0 for r in rows)
    assert rows and all(r["workload"] == "sqdist-lowd/float32" and r["median_s"] > 0 for r in rows)
    for r in rows:
        assert r["rounds"] == 1 and r["min_s"] == r["median_s"] == r["q1_s"] == r["q3_s"] == r["times_s"][0]
        assert len(r["load_before"]) == 3
    ours = rows[0]
    assert ours["kind"] == "fastrbf" and ours["verdict"] in ("faster", "slower", "within noise")
    best = min((r for r in rows if r["kind"] == "peer"), key=lambda r: r["median_s"])
    assert ours["best_peer"] == best["contender"]
    assert ours["ratio_vs_best_peer"] == pytest.approx(best["median_s"] / ours["median_s"])
    _png_size(tmp_path / "run.png")
    def scaled(f):
        return [dict(r, median_s=f * r["median_s"], min_s=f * r["min_s"], q1_s=f * r["q1_s"], q3_s=f * r["q3_s"],
                     times_s=[f * t for t in r["times_s"]]) for r in rows]

    slow, fast = scaled(2.0), scaled(0.5)
    capsys.readouterr()
    bench.main(["--from", _write(tmp_path / "slow.json", slow), "--compare", str(run)])
    out = capsys.readouterr().out
    ours = sum(r["kind"] == "fastrbf" for r in rows)
    assert ours and out.count("REGRESSION") == ours and out.count("peer slower") == len(rows) - ours
    assert "+100.0%" in out
    bench.main(["--from", _write(tmp_path / "fast.json", fast), "--compare", str(run)])
    out = capsys.readouterr().out
    assert out.count(" faster") >= len(rows) + 1 and "REGRESSION" not in out and "-50.0%" in out


# ---------------------------------------------------------------- timing in rounds and verdicts
def test_time_rounds_interleaves_every_contender_once_per_round():
    calls = []
    fns = [lambda a, i=i: calls.append(i) for i in range(4)]
    times = harness.time_rounds(fns, {}, rounds=6, seed=1)
    assert [len(t) for t in times] == [6] * 4
    rounds = [calls[4 * r: 4 * r + 4] for r in range(6)]
    assert all(sorted(r) == [0, 1, 2, 3] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # the order is shuffled between rounds


def test_time_rounds_caps_and_self_timed():
    calls = []

    class SelfTimed:
        self_timed = True

        def __call__(self, a):
            calls.append("s")
            return 0.25

    times = harness.time_rounds([SelfTimed(), lambda a: calls.append("f")], {}, rounds=5, caps=[2, 5])
    assert times[0] == [0.25, 0.25] and len(times[1]) == 5
    assert calls.count("s") == 2 and calls.count("f") == 5


def test_time_rounds_budget_per_contender():
    """A contender sits out once its calls add up to the budget (after the minimum
    rounds); the others go on, so a slow reference does not cut their rounds short."""
    class Clock:
        self_timed = True

        def __init__(self, t):
            self.t = t

        def __call__(self, a):
            return self.t

    times = harness.time_rounds([Clock(0.3), Clock(0.01)], {}, rounds=15, budget_s=0.8, min_rounds=5)
    assert len(times[0]) == 5 and len(times[1]) == 15
    times = harness.time_rounds([Clock(0.125), Clock(0.01)], {}, rounds=15, budget_s=0.8, min_rounds=5)
    assert len(times[0]) == 7  # 0.875 s >= 0.8 s spent after 7 calls


def test_paired_ratio_uses_common_rounds():
    med, q1, q3 = harness.paired_ratio([2.0, 4.0, 6.0, 100.0], [1.0, 2.0, 2.0])
    assert (med, q1, q3) == (2.0, 2.0, 2.5)


def test_verdict_disjoint_and_overlapping_spreads():
    rng = __import__("numpy").random.default_rng(0)
    load = rng.uniform(1.0, 3.0, 15)  # a load drift that hits both contenders of a round alike
    ours = 0.010 * load * rng.uniform(0.97, 1.03, 15)
    peer = 0.020 * load * rng.uniform(0.97, 1.03, 15)
    _, q1, q3 = harness.paired_ratio(peer, ours)
    assert harness.verdict(q1, q3) == "faster"
    _, q1, q3 = harness.paired_ratio(ours, peer)
    assert harness.verdict(q1, q3) == "slower"
    same = 0.010 * load * rng.uniform(0.8, 1.25, 15)  # the same speed, noisy: ratios straddle 1
    _, q1, q3 = harness.paired_ratio(same, ours)
    assert q1 < 1 < q3
    assert harness.verdict(q1, q3) == "within noise"
    # a difference smaller than the margin is not a verdict, however clean
    assert harness.verdict(1.03, 1.04) == "within noise"
    assert harness.verdict(1.0 / 1.04, 1.0 / 1.03) == "within noise"


def _workload_rows(name, contenders, times, shape="N=10", accuracy=""):
    rows = [dict(workload=name, contender=label, kind=kind, shape=shape, accuracy=accuracy, n=10, unit="pairs/s",
                 times_s=t, peak_mem_bytes=2**20, note="", **harness.summarize(t))
            for (label, kind), t in zip(contenders, times, strict=True)]
    harness.add_ratios(rows)
    return rows


def test_add_ratios_best_peer_numpy_and_baseline():
    rows = _workload_rows("w", [("fastrbf", "fastrbf"), ("numpy reference", "numpy"), ("slow peer", "peer"),
                                ("fast peer", "peer"), ("LAPACK", "floor")],
                          [[1.0, 1.1, 0.9], [10.0, 11.0, 9.0], [5.0, 5.0, 5.0], [2.0, 2.2, 1.8], [0.5, 0.55, 0.45]])
    ours = rows[0]
    assert ours["best_peer"] == "fast peer" and ours["verdict"] == "faster"
    assert ours["ratio_vs_best_peer"] == pytest.approx(2.0)
    assert ours["ratio_vs_numpy"] == pytest.approx(10.0)
    assert ours["ratio_vs_baseline"] == pytest.approx(0.5) and ours["baseline_kind"] == "floor"
    assert all(r["verdict"] is None for r in rows[1:])  # verdicts are for fastrbf rows only


# ---------------------------------------------------------------- the table
_LONG = [("fastrbf kmeans (per iteration)", "fastrbf"), ("fastrbf lloyd_assign+lloyd_update", "fastrbf"),
         ("numpy reference (plain k-means + Phi + solve)", "numpy"), ("scikit-learn KMeans + rbf_kernel + Ridge", "peer"),
         ("fastrbf kernel_ridge + predict (the calls it wraps)", "baseline"), ("LAPACK dpotrf alone", "floor")]


def _realistic_rows():
    """Every workload and contender label of the suite, with times from 10 us to 30 s."""
    import numpy as np

    rng = np.random.default_rng(1)
    rows = []
    for wl in workloads.all_workloads():
        cs = [(c.label, c.kind) for c in wl.contenders]
        base = 10 ** rng.uniform(-5, 1.5)
        times = [list(base * 10 ** rng.uniform(-1, 1) * rng.uniform(0.7, 1.4, 15)) for _ in cs]
        rows += _workload_rows(wl.name, cs, times, shape=f"{wl.name} at a size described at length, float64 " * 2,
                               accuracy="test RMSE 0.5123 (12 CG iterations) vs exact KRR on 2000 points 0.5100")
    rows += _workload_rows("long-labels", _LONG, [[0.01, 0.011, 0.012]] * len(_LONG))
    rows += [dict(workload="compile", contender=name, kind="compile", median_s=3.0, cold_cpu_s=2.9,
                  float32_extra_s=1.0, warm_extra_s=0.01) for name in ("sqdist", "kernel_ridge[nystrom-pcg]")]
    rows.append(dict(workload="compile", contender="import fastrbf (after numba)", kind="import",
                     **harness.summarize([0.2, 0.25, 0.3]), numba_import_s=0.4))
    return rows


def test_table_is_at_most_120_wide_with_a_numbered_legend():
    rows = _realistic_rows()
    text = report.format_table(rows)
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= report.TABLE_WIDTH == 120
    groups = list(dict.fromkeys(r["workload"] for r in rows if r["workload"] != "compile"))
    for k, w in enumerate(groups, 1):
        assert f"[{k}] {w}" in lines  # the group header: the name alone
        assert any(ln.startswith(f"[{k}] {w}: ") for ln in lines)  # the legend entry with the size
    # sizes and accuracy notes are in the legend, not in the cells
    header_at = lines.index(f"[1] {groups[0]}")
    legend_at = next(i for i, ln in enumerate(lines) if ln.startswith(f"[1] {groups[0]}: "))
    assert all("at a size described" not in ln and "RMSE" not in ln for ln in lines[header_at:legend_at])
    assert "compile: first call" in text and "import fastrbf after import numba: 250 ms" in text
    assert "missed: cold > 2 s" in text  # sqdist's cold-call goal


def test_table_cells_one_meaning_each():
    rows = _workload_rows("w", _LONG, [[0.010] * 3, [0.02] * 3, [1.0] * 3, [0.03] * 3,
                                      [0.012, 0.011, 0.01], [0.005] * 3])
    lines = report.format_table(rows).splitlines()
    head = lines[0]
    assert [c.strip() for c in head.split("  ") if c.strip()][:2] == ["workload / contender", "time min / median"]
    for col in ("IQR", "vs best peer", "vs NumPy", "vs base", "peak mem"):
        assert col in head
    assert "vs floor" not in head
    row = {ln[2:].split("  ")[0]: ln for ln in lines[3:9]}
    assert "[baseline]" in next(ln for ln in row.values() if "kernel_ridge + predict" in ln)
    assert "LAPACK dpotrf alone [floor]" in row
    assert "3.00x faster" in row["fastrbf kmeans (per iteration)"]
    assert "best peer" in row["scikit-learn KMeans + rbf_kernel + Ridge"]
    legend = "\n".join(lines)
    assert "vs base: against fastrbf kernel_ridge + predict (the calls it wraps) (baseline)" in legend


def test_table_marks_noisy_ratios_within_noise():
    rows = _workload_rows("w", [("fastrbf", "fastrbf"), ("peer", "peer")],
                          [[1.0, 2.0, 1.0, 2.0, 1.5], [2.0, 1.0, 1.9, 1.1, 1.5]])
    assert rows[0]["verdict"] == "within noise"
    assert "within noise" in report.format_table(rows)


def test_scaling_section_over_sizes():
    rows = []
    for n, t in ((1000, 0.01), (2000, 0.04), (4000, 0.16)):
        rows += [dict(r, n=n) for r in _workload_rows("w", [("fastrbf", "fastrbf"), ("peer", "peer")],
                                                      [[t] * 3, [2 * t] * 3], shape=f"N={n}")]
    text = report.format_table(rows)
    assert "scaling: median time per call as N grows" in text
    line = next(ln for ln in text.splitlines()[text.splitlines().index("w"):] if ln.strip().startswith("fastrbf"))
    assert line.split()[-1] == "2.00"  # time ~ N^2
    assert report.format_scaling(rows[:2]) == ""  # one size: no section


def test_workload_sizes_ascend_and_quick_is_first():
    for wl in workloads.all_workloads():
        assert wl.sizes, wl.name
        ns = [suite.n_of(s) for s in wl.sizes]
        assert ns == sorted(ns) and len(set(ns)) == len(ns), wl.name


def test_busy_warning_when_load_exceeds_cores():
    cores = os.cpu_count()
    assert "verdicts may be unreliable (--threads 1" in harness.busy_warning([cores + 0.5, 0, 0])
    assert harness.busy_warning([cores - 0.5, 0, 0]) is None
    assert harness.busy_warning(None) is None


# ---------------------------------------------------------------- compile and import
def test_measure_compile_one_target_in_fresh_processes():
    lines = []
    rows = harness.measure_compile(targets=["sqdist"], import_repeats=1, log=lines.append)
    comp, imp = rows
    assert comp["contender"] == "sqdist" and comp["kind"] == "compile" and comp["workload"] == "compile"
    assert comp["median_s"] > 0 and comp["cold_cpu_s"] > 0 and comp["float32_extra_s"] > 0
    assert comp["warm_first_s"] > 0 and comp["warm_extra_s"] == comp["warm_first_s"] - comp["second_s"]
    assert comp["goal_misses"] == harness.compile_goal_misses(comp)
    assert imp["kind"] == "import" and imp["median_s"] > 0 and imp["numba_import_s"] > 0
    assert lines[0].startswith("[compile 1/1] sqdist")
    assert "sqdist" in report.format_compile(rows)


def test_measure_compile_unknown_target():
    with pytest.raises(ValueError, match=r"`targets` must name entries of fastrbf.compile.TARGETS; got \['nope'\]"):
        harness.measure_compile(targets=["nope"])


def test_compile_goals():
    row = dict(contender="kernel_ridge", median_s=3.0, float32_extra_s=2.5, warm_extra_s=0.2)
    assert harness.compile_goal_misses(row) == ["float32 > 2 s", "warm > 50 ms"]
    assert harness.compile_goal_misses(dict(row, contender="sqdist")) == ["cold > 2 s", "float32 > 2 s",
                                                                              "warm > 50 ms"]


def test_plot_labels_baselines_and_writes_ratios(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    rows = _workload_rows("w", _LONG, [[0.010] * 3, [0.02] * 3, [1.0] * 3, [0.03] * 3,
                                      [0.012, 0.011, 0.01], [0.005] * 3],
                          shape="a long size description " * 6)
    seen = {}
    real_close = plt.close

    def close(fig):
        ax = fig.axes[0]
        seen["labels"] = [t.get_text() for t in ax.get_yticklabels()]
        seen["texts"] = [t.get_text() for t in ax.texts]
        seen["title"] = ax.get_title(loc="left")
        seen["faces"] = [tuple(p.get_facecolor()) for p in ax.patches]
        real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    figure.plot(rows, tmp_path / "r.png", title="t")
    assert "fastrbf kernel_ridge + predict (the calls it wraps) [baseline]" in seen["labels"]
    assert "LAPACK dpotrf alone [hardware floor]" in seen["labels"]
    assert any("3.00x vs best peer: faster" in t for t in seen["texts"])
    assert seen["title"].replace("\n", " ").endswith(("a long size description " * 6).strip())  # wrapped, whole
    from matplotlib.colors import to_rgba

    baseline_face = seen["faces"][[r["kind"] for r in rows].index("baseline")]
    assert baseline_face == to_rgba("white") != to_rgba(figure.KIND_COLOURS["floor"])


def test_plot_workload_with_only_skipped_rows(tmp_path):
    """A workload whose contenders were all skipped draws notes, no bars and no
    log-scale warning (warnings are errors in this suite)."""
    rows = [_row("skipped", "numpy reference", None, "numpy"), _row("a", "fastrbf", 1.0)]
    figure.plot(rows, tmp_path / "r.png", baseline=rows)
    _png_size(tmp_path / "r.png")


def test_cli_only_compile_runs_just_the_compile_rows(tmp_path, capsys, monkeypatch):
    """``--only compile``: no workload, the compile and import rows in their own section
    and in the JSON (the fresh processes are stood in for here; they are timed for real
    in test_measure_compile_one_target_in_fresh_processes)."""
    seen = {}

    def fake(quick=True, log=None):
        seen["quick"] = quick
        return [dict(workload="compile", contender="sqdist", kind="compile", median_s=1.5, cold_cpu_s=1.4,
                     float32_extra_s=0.5, warm_extra_s=0.01, shape="tiny float64 call, fresh process"),
                dict(workload="compile", contender="import fastrbf (after numba)", kind="import",
                     **harness.summarize([0.1, 0.12, 0.14]))]

    monkeypatch.setattr(harness, "measure_compile", fake)
    rows = bench.main(["--only", "compile", "--json", str(tmp_path / "c.json")])
    out = capsys.readouterr().out
    assert seen == {"quick": True} and [r["kind"] for r in rows] == ["compile", "import"]
    assert "workload / contender" not in out  # no timing table
    assert "compile: first call of a public function" in out and "met" in out
    assert "import fastrbf after import numba: 120 ms" in out
    assert report.load_rows(tmp_path / "c.json") == rows


def test_compare_reads_the_size_of_older_rows_with_an_accuracy_note():
    """Older versions appended the accuracy note to the size description."""
    old = [_row("w", "fastrbf", 1.0, shape="N=10; test RMSE 0.5")]
    new = [dict(_row("w", "fastrbf", 1.05, shape="N=10"), accuracy="test RMSE 0.5")]
    assert report.compare(old, new)[0]["status"] == "same"


def test_per_iteration_time_is_positive_under_a_burst_of_load(monkeypatch):
    """A burst of load during the first 1-iteration fit must not make the per-iteration
    time negative: the faster of the two 1-iteration fits is subtracted."""
    clock = [0.0]
    monkeypatch.setattr(cluster.time, "perf_counter", lambda: clock[0])
    costs = iter([0.5, 0.05, 0.01])  # 1 iteration under load, 1 + 4 iterations, 1 iteration

    def fit(a, n_iter):
        clock[0] += next(costs)

    per_iter = cluster.PerIteration(fit)({})
    assert per_iter == pytest.approx((0.05 - 0.01) / 4)
    costs = iter([0.5, 0.05, 0.2])  # both 1-iteration fits slower than the long one
    assert cluster.PerIteration(fit)({}) == pytest.approx(0.05 / 5)


def test_run_limited_to_one_thread():
    """``n_threads=1`` (``--threads 1``): every contender runs single-threaded, and the
    rows say so; the limit ends with the run."""
    import numba

    before = numba.get_num_threads()
    rows = suite.run(quick=True, repeats=1, only="gram-matvec", n_threads=1)
    timed = [r for r in rows if r["unavailable"] is None]  # a peer that is not installed has no time
    assert any(r["kind"] == "fastrbf" for r in timed)
    assert all(r["threads"] == 1 and r["median_s"] > 0 for r in timed)
    assert all(r["median_s"] is None for r in rows if r["unavailable"] is not None)
    assert numba.get_num_threads() == before


def test_compare_compile_rows_by_cpu_time():
    old = [dict(workload="compile", contender="sqdist", kind="compile", median_s=2.0, cold_cpu_s=1.9)]
    busy = [dict(old[0], median_s=4.0, cold_cpu_s=2.0)]  # wall time doubled by other processes, CPU time not
    res = report.compare(old, busy)[0]
    assert res["status"] == "same" and res["old_s"] == 1.9 and res["new_s"] == 2.0
    slower = [dict(old[0], median_s=4.0, cold_cpu_s=3.8)]
    assert report.compare(old, slower)[0]["status"] == "REGRESSION"


def test_compare_uses_the_range_of_the_rounds():
    """Rows with their rounds: beyond the noise means the ranges of the rounds do not
    overlap (the interquartile ranges would: one slow round in the old run)."""
    old = [dict(_row("w", "fastrbf", 1.0), times_s=[0.9, 1.0, 1.0, 1.1, 1.6])]
    new = [dict(_row("w", "fastrbf", 1.5), times_s=[1.4, 1.5, 1.5, 1.6, 1.7])]
    assert report.compare(old, new)[0]["status"] == "within noise"  # 1.4 < 1.6
    new = [dict(_row("w", "fastrbf", 1.8), times_s=[1.7, 1.8, 1.8, 1.9, 2.0])]
    assert report.compare(old, new)[0]["status"] == "REGRESSION"


def test_compare_compile_rows_need_more_than_the_threshold():
    # one cold compile per run, no rounds: a change is a regression only beyond COMPILE_THRESHOLD
    def row(cpu):
        return dict(workload="compile", contender="sqdist", kind="compile", median_s=cpu, cold_cpu_s=cpu)

    assert report.COMPILE_THRESHOLD > 10
    within = 1 + (10 + report.COMPILE_THRESHOLD) / 200  # between the threshold and COMPILE_THRESHOLD
    beyond = 1 + (report.COMPILE_THRESHOLD + 5) / 100
    assert report.compare([row(1.0)], [row(within)], threshold=10)[0]["status"] == "same"
    assert report.compare([row(1.0)], [row(beyond)], threshold=10)[0]["status"] == "REGRESSION"


# ---------------------------------------------------------------- the package
def test_registry_lists_the_families_in_the_order_of_the_report():
    names = [wl.name for wl in workloads.all_workloads()]
    # the GPU rows come last, on every machine (they say "no GPU" where there is none)
    gpu = ["gpu-gram-matvec/float32", "gpu-lloyd/float32", "gpu-knn/float32", "gpu-krr-large"]
    assert names[-4:] == gpu
    names = names[:-4]
    assert names[:-3] == [
        "sqdist-lowd/float64", "sqdist-lowd/float32", "sqdist-highd/float64", "sqdist-manyd/float64", "gram-gaussian",
        "gram-matern52",
        "gram-matvec", "lloyd-small/float64", "lloyd-small/float32", "lloyd-large/float64", "lloyd-large/float32",
        "lloyd-sparse", "kmeans-20-iterations", "kmeans-converge", "kernel-kmeans-exact", "kernel-kmeans-large",
        "cholesky", "krr-fit", "krr-large", "interp",
        "interp-local", "interp-large", "predict-grad", "rbfnet-fit", "rbfnet-forward", "select-krr", "knn", "knn-manyd",
        "knn-lowd", "nadaraya-watson", "gp-fit", "gp-fit-matern52-ard", "gp-predict", "gp-predict-grad-std", "sparse-gp",
        "vecchia-gp", "vecchia-lml", "rff", "landmarks"]
    # the estimators (scikit-learn) and the cluster run (dask, distributed) follow, when installed
    assert names[-3:] == ["sklearn-overhead/rbfnet-fit", "sklearn-overhead/krr-fit-predict", "dask-lloyd"]
    assert [wl.name for wl in workloads.select("lloyd-small")] == ["lloyd-small/float64", "lloyd-small/float32"]


def test_quick_compile_targets_are_targets_of_fastrbf_compile():
    from fastrbf.compile import TARGETS

    assert set(harness.QUICK_COMPILE_TARGETS) <= set(TARGETS)
    assert set(harness.COMPILE_GOALS["fast"]) <= set(TARGETS)


def test_import_fastrbf_leaves_the_benchmark_package_out():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([harness.package_root()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    code = "import sys, fastrbf; print(sorted(m for m in sys.modules if m.startswith('fastrbf.bench')))"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300, check=True)
    assert proc.stdout.strip() == "[]"
