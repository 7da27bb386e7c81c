"""The benchmark report: ``--compare``, ``--plot`` and ``--from`` of ``python -m fastrbf.bench``.

Synthetic rows test the comparison rules; one tiny real run (one workload, one timed
call per contender) tests the whole path from a run to the figure."""

import json
import os
import pathlib
import struct
import subprocess
import sys

import pytest

import fastrbf
from fastrbf import _report, bench


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
    res = {(r["workload"], r["contender"]): r for r in _report.compare(OLD, NEW, threshold=10)}
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
    assert res[("a", "peer")]["status"] == "faster"  # -50%
    assert res[("b", "fastrbf")]["status"] == "same"
    assert res[("b", "gone")]["status"] == "only in old"
    assert res[("b", "added")]["status"] == "only in new"
    assert res[("c", "fastrbf")]["status"] == "not measured"
    assert res[("d", "fastrbf")]["status"] == "size differs"  # 9x slower, but not the same size


def test_compare_threshold_moves_the_line():
    pct = {r["contender"]: r["status"] for r in _report.compare(OLD[:3], NEW[:3], threshold=30)}
    assert pct == {"fastrbf": "same", "numpy reference": "same", "peer": "faster"}
    pct = {r["contender"]: r["status"] for r in _report.compare(OLD[:3], NEW[:3], threshold=0)}
    assert pct == {"fastrbf": "REGRESSION", "numpy reference": "REGRESSION", "peer": "faster"}


def test_compare_order_new_then_old_only():
    res = _report.compare(OLD, NEW)
    keys = [(r["workload"], r["contender"]) for r in res]
    assert keys[: len(NEW)] == [(r["workload"], r["contender"]) for r in NEW]
    assert keys[len(NEW):] == [("b", "gone")]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "10", True, None])
def test_compare_bad_threshold(bad):
    with pytest.raises(ValueError, match=r"`threshold` must be a finite number >= 0"):
        _report.compare(OLD, NEW, threshold=bad)


def test_format_compare_lists_every_row_and_counts():
    res = _report.compare(OLD, NEW, threshold=10)
    text = _report.format_compare(res, threshold=10)
    lines = text.splitlines()
    assert len(lines) == 2 + len(res) + 1
    assert sum("REGRESSION" in ln for ln in lines[2:-1]) == 1
    assert "+25.0%" in text and "-50.0%" in text
    assert lines[-1] == "1 regression (> 10% slower), 1 faster, 2 within 10%; 4 not comparable"


# ---------------------------------------------------------------- load_rows
def test_load_rows_round_trip(tmp_path):
    assert _report.load_rows(_write(tmp_path / "r.json", NEW)) == NEW


def test_load_rows_rejects_other_json(tmp_path):
    with pytest.raises(ValueError, match=r"must hold a JSON list of benchmark rows"):
        _report.load_rows(_write(tmp_path / "r.json", {"rows": NEW}))
    with pytest.raises(ValueError, match=r"must hold a JSON list of benchmark rows"):
        _report.load_rows(_write(tmp_path / "r.json", [{"workload": "a"}]))
    (tmp_path / "bad.json").write_text("not json")
    with pytest.raises(ValueError, match=r"is not a JSON file of benchmark rows"):
        _report.load_rows(str(tmp_path / "bad.json"))


# ---------------------------------------------------------------- plot
def test_plot_writes_png(tmp_path):
    out = tmp_path / "r.png"
    assert _report.plot(NEW, out, baseline=OLD, title="t") == str(out)
    w, h = _png_size(out)
    assert w > 800 and h > 400


def test_plot_one_panel_per_workload(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    seen = {}
    real_close = plt.close

    def close(fig):  # look at the figure before it is closed
        axes = [ax for ax in fig.axes if ax.get_visible()]
        seen["titles"] = [ax.get_title(loc="left") for ax in axes]
        seen["bars"] = [len(ax.patches) for ax in axes]
        seen["xscale"] = {ax.get_xscale() for ax in axes}
        seen["ticks"] = [sorted(float(x) for c in ax.collections for x, _ in c.get_offsets()) for ax in axes]
        real_close(fig)

    monkeypatch.setattr(plt, "close", close)
    _report.plot(NEW, tmp_path / "r.svg", ncols=3, baseline=OLD)
    workloads = list(dict.fromkeys(r["workload"] for r in NEW))
    assert [t.split()[0] for t in seen["titles"]] == workloads
    assert seen["bars"] == [sum(r["workload"] == w for r in NEW) for w in workloads]
    assert seen["xscale"] == {"log"}
    # baseline ticks: the old throughput of rows measured on both sides at the same size
    old = {(r["workload"], r["contender"]): r for r in OLD}
    for w, ticks in zip(workloads, seen["ticks"], strict=True):
        want = sorted(r["throughput"] * r["median_s"] / old[w, r["contender"]]["median_s"] for r in NEW
                      if r["workload"] == w and r["median_s"] and old.get((w, r["contender"]), {}).get("median_s")
                      and old[w, r["contender"]]["shape"] == r["shape"])
        assert ticks == pytest.approx(want)
    assert (tmp_path / "r.svg").read_text().lstrip().startswith("<?xml")


def test_plot_errors(tmp_path):
    with pytest.raises(ValueError, match=r"`rows` must hold at least one benchmark row"):
        _report.plot([], tmp_path / "r.png")
    with pytest.raises(ValueError, match=r"`ncols` must be an int >= 1; got 0"):
        _report.plot(NEW, tmp_path / "r.png", ncols=0)
    with pytest.raises(ValueError, match=r"`threshold` must be a finite number >= 0"):
        _report.plot(NEW, tmp_path / "r.png", threshold=-5)
    assert not (tmp_path / "r.png").exists()


def test_plot_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    with pytest.raises(ImportError, match=r"pip install fastrbf\[plot\]"):
        _report.plot(NEW, tmp_path / "r.png")
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
    (["--fail-on-regression"], r"--fail-on-regression needs --compare"),
    (["--threshold", "-1"], r"--threshold: must be a finite number >= 0"),
    (["--threshold", "abc"], r"--threshold: must be a finite number >= 0"),
    (["--from", "{missing}"], r"--from: .*No such file"),
    (["--compare", "{bad}"], r"--compare: .*must hold a JSON list of benchmark rows"),
    (["--from", "{new}", "--only", "zzz", "--plot", "r.png"], r"--plot: no benchmark rows to draw"),
])
def test_cli_errors(tmp_path, capsys, argv, match):
    paths = dict(missing=str(tmp_path / "missing.json"), bad=_write(tmp_path / "bad.json", {"a": 1}),
                 new=_write(tmp_path / "new.json", NEW))
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
    rows = _report.load_rows(run)
    assert rows and all(r["workload"] == "sqdist-lowd/float32" and r["median_s"] > 0 for r in rows)
    _png_size(tmp_path / "run.png")
    slow = [dict(r, median_s=2 * r["median_s"]) for r in rows]
    fast = [dict(r, median_s=r["median_s"] / 2) for r in rows]
    capsys.readouterr()
    bench.main(["--from", _write(tmp_path / "slow.json", slow), "--compare", str(run)])
    out = capsys.readouterr().out
    assert out.count("REGRESSION") == len(rows) and "+100.0%" in out
    bench.main(["--from", _write(tmp_path / "fast.json", fast), "--compare", str(run)])
    out = capsys.readouterr().out
    assert out.count("faster") == len(rows) + 1 and "REGRESSION" not in out and "-50.0%" in out


def test_plot_workload_with_only_skipped_rows(tmp_path):
    """A workload whose contenders were all skipped draws notes, no bars and no
    log-scale warning (warnings are errors in this suite)."""
    rows = [_row("skipped", "numpy reference", None, "numpy"), _row("a", "fastrbf", 1.0)]
    _report.plot(rows, tmp_path / "r.png", baseline=rows)
    _png_size(tmp_path / "r.png")
