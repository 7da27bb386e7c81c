"""The roofline of ``python -m fastrbf.bench`` and the peers users would pick instead:
the floor fraction and the binding floor from given costs, times and floors; the table's
``floor %`` column and legend; a peer that is not installed or fails shown as such; the
JSON round trip and ``--compare`` / ``--from`` with a file saved before these fields."""

import importlib.util
import json

import numpy as np
import pytest

from fastrbf import bench
from fastrbf.bench import harness, report, roofline, suite, workloads
from fastrbf.bench.roofline import Cost
from fastrbf.bench.workloads import distances, kernels, peers

FLOORS = dict(blas=dict(internal_api="openblas", version="0.3.31", architecture="SkylakeX", num_threads=2), threads=2,
              dgemm_gflops=100.0, sgemm_gflops=200.0, read_gbs=20.0, write_gbs=10.0, exp_f64_gelems=1.0,
              exp_f32_gelems=2.0, fexp_f64_gelems=1.5, seconds=2.0)


# ---------------------------------------------------------------- fractions and the binding floor
@pytest.mark.parametrize("cost, dtype, bound, floor_s", [
    (Cost(flops=1e9), "float64", "flop", 0.01),  # 1 GFLOP at 100 GFLOP/s
    (Cost(flops=1e9), "float32", "flop", 0.005),  # SGEMM's peak for float32
    (Cost(flops=1e9, bytes_read=2e8, bytes_written=2e8), "float64", "mem", 0.01 + 0.02),  # read + write
    (Cost(flops=1e9, exps=3e7), "float64", "exp", 0.02),  # the faster of np.exp (1.0) and fexp (1.5 Gelem/s)
    (Cost(flops=1e9, exps=3e7), "float32", "exp", 0.015),  # float32: np.exp's float32 rate (2.0 Gelem/s)
    (Cost(flops=1e9, bytes_written=1e9, exps=1e7), "float64", "mem", 0.1),
])
def test_binding_floor_and_fraction(cost, dtype, bound, floor_s):
    r = roofline.roofline_fields(cost, FLOORS, dtype, 0.2)
    assert r["floor_bound"] == bound
    assert r["floor_s"] == pytest.approx(floor_s)
    assert r["floor_fraction"] == pytest.approx(floor_s / 0.2)
    work = {"flop": cost.flops, "mem": cost.bytes_read + cost.bytes_written, "exp": cost.exps}[bound]
    assert r["achieved_rate"] == pytest.approx(work / 0.2 / 1e9)
    assert r["achieved_unit"] == roofline.BOUNDS[bound]
    assert (r["flops"], r["bytes_read"], r["bytes_written"], r["exps"]) == (cost.flops, cost.bytes_read,
                                                                            cost.bytes_written, cost.exps)


def test_fexp_not_measured_uses_np_exp():
    floors = dict(FLOORS, fexp_f64_gelems=None)
    assert roofline.floor_times(Cost(exps=1e9), floors, "float64")["exp"] == pytest.approx(1.0)


def test_no_cost_floors_or_time_give_no_fraction():
    empty = roofline.roofline_fields(None, FLOORS, "float64", 0.1)
    assert all(v is None for v in empty.values())
    no_floors = roofline.roofline_fields(Cost(flops=1e9), {}, "float64", 0.1)
    assert no_floors["flops"] == 1e9 and no_floors["floor_fraction"] is None and no_floors["floor_bound"] is None
    skipped = roofline.roofline_fields(Cost(flops=1e9), FLOORS, "float64", None)
    assert skipped["floor_s"] == pytest.approx(0.01) and skipped["floor_fraction"] is None


def test_fraction_cell():
    assert roofline.format_fraction({"floor_fraction": 0.4, "floor_bound": "exp"}) == "40%"
    assert roofline.format_fraction({"floor_fraction": 1.02, "floor_bound": "mem"}) == "102%"
    assert roofline.format_fraction({"floor_fraction": 0.001, "floor_bound": "flop"}) == "<1%"
    assert roofline.format_fraction({"floor_fraction": None}) == "-"


def test_measure_floors_small():
    f = roofline.measure_floors(1, scale=0.01, fexp=False)
    for k in ("dgemm_gflops", "sgemm_gflops", "read_gbs", "write_gbs", "exp_f64_gelems", "exp_f32_gelems"):
        assert np.isfinite(f[k]) and f[k] > 0, k
    assert f["threads"] == 1 and f["fexp_f64_gelems"] is None
    assert set(f["blas"]) == {"internal_api", "version", "architecture", "num_threads"}
    assert all(len(ln) <= 120 for ln in roofline.format_floors(f).splitlines())


def test_workload_cost_is_the_essential_work():
    wl = next(w for w in distances.workloads() if w.name == "sqdist-lowd/float32")
    data = wl.setup((300, 200))
    c = wl.cost(data)
    assert c == Cost(flops=2.0 * 300 * 200 * 16, bytes_read=(300 + 200) * 16 * 4, bytes_written=300 * 200 * 4)
    # (the GPU rows are measured against no CPU floor: they declare no cost)
    cpu = [w for w in workloads.select("lloyd") + workloads.select("gram") if not w.name.startswith("gpu-")]
    assert len(cpu) >= 9 and all(w.cost is not None for w in cpu)


# ---------------------------------------------------------------- the table
def _row(contender, kind, median_s, **kw):
    r = dict(workload="w", shape="10x2", contender=contender, kind=kind, min_s=median_s, median_s=median_s,
             q1_s=median_s, q3_s=median_s, times_s=[median_s] if median_s else None, dtype="float64",
             peak_mem_bytes=None, note="", unavailable=None)
    r.update(roofline.roofline_fields(Cost(flops=1e9, exps=3e7), FLOORS, "float64", median_s))
    r.update(kw)
    return r


ROWS = [_row("fastrbf", "fastrbf", 0.04),
        _row("a peer with a long label that the table has to shorten to fit in its width", "peer", 0.08,
             note="code path: AVX2"),
        _row("pykeops CPU LazyTensor", "peer", None, unavailable="not installed",
             note="not installed: pip install pykeops (needs g++)"),
        _row("sklearnex", "peer", None, unavailable="failed: RuntimeError", note="failed here: RuntimeError: boom")]


def test_table_floor_column_and_legend():
    harness.add_ratios(ROWS)
    text = report.format_table(ROWS)
    lines = text.splitlines()
    assert all(len(ln) <= report.TABLE_WIDTH for ln in lines)
    assert lines[0].endswith("  floor")
    ours = next(ln for ln in lines if ln.startswith("  fastrbf "))
    assert ours.endswith(" 50%")  # 0.02 s of exp floor over 0.04 s
    assert next(ln for ln in lines if "a peer with" in ln).endswith(" 25%")
    assert "not installed" in next(ln for ln in lines if ln.startswith("  pykeops"))
    assert "failed: RuntimeError" in next(ln for ln in lines if ln.startswith("  sklearnex"))
    legend = " ".join(text.split("\n\n")[1].split())
    assert "floor (exp) 20.0 ms for 1.00 Gflop, 30.0 Mexp; fastrbf 0.75 Gexp/s" in legend
    assert "pykeops CPU LazyTensor: not installed: pip install pykeops (needs g++)" in legend
    assert "sklearnex: failed here: RuntimeError: boom" in legend
    assert "code path: AVX2" in legend
    assert "floor: the time the workload's binding floor allows" in text


# ---------------------------------------------------------------- peers that cannot run
def test_missing_peer_is_a_row_not_an_omission(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(peers.importlib.util, "find_spec",
                        lambda name, *a: None if name == "pykeops" else real(name, *a))
    wl = next(w for w in kernels.workloads() if w.name == "gram-matvec")
    c = next(c for c in wl.contenders if c.label.startswith("pykeops"))
    assert c.missing == "not installed" and "pip install pykeops" in c.note


def _tiny_workload(fail):
    def broken(a):
        raise fail

    return harness.Workload(
        "tiny-roof", lambda n: {"X": np.ones((n, 2))}, lambda a: a["X"].shape[0], "points/s", [
            harness.Contender("fastrbf", harness.FASTRBF, lambda a: a["X"].sum()),
            harness.Contender("numpy reference", harness.NUMPY, lambda a: a["X"].sum()),
            peers.optional_peer("absent peer", "no_such_module_here", lambda a: None, package="pykeops"),
            harness.Contender("broken peer", harness.PEER, broken),
            harness.Contender("noted peer", harness.PEER, lambda a: a["X"].sum(), note=lambda: "ran the AVX2 path"),
        ], lambda a: f"{a['X'].shape[0]}x2", sizes=(50,), cost=lambda a: Cost(bytes_read=a["X"].nbytes))


def test_suite_shows_missing_and_failed_peers(monkeypatch):
    wl = _tiny_workload(ImportError("libfoo.so: cannot open shared object file"))
    monkeypatch.setattr(workloads, "select", lambda only=None: [wl])
    rows = suite.run(quick=True, repeats=2, only="tiny-roof", floors=FLOORS)
    by = {r["contender"]: r for r in rows}
    assert set(by) == {"fastrbf", "numpy reference", "absent peer", "broken peer", "noted peer"}
    assert by["absent peer"]["unavailable"] == "not installed" and by["absent peer"]["median_s"] is None
    assert by["broken peer"]["unavailable"] == "failed: ImportError"
    assert by["broken peer"]["note"] == "failed here: ImportError: libfoo.so: cannot open shared object file"
    assert by["noted peer"]["note"] == "ran the AVX2 path" and by["noted peer"]["median_s"] > 0
    assert by["fastrbf"]["floor_bound"] == "mem" and by["fastrbf"]["floor_fraction"] > 0
    assert by["fastrbf"]["best_peer"] == "noted peer"  # the rows that did not run are no best peer
    text = report.format_table(rows)
    assert "not installed" in text and "failed: ImportError" in text


def test_suite_raises_when_fastrbf_itself_fails(monkeypatch):
    wl = _tiny_workload(RuntimeError("x"))
    wl.contenders[0] = harness.Contender("fastrbf", harness.FASTRBF, wl.contenders[3].fn)
    monkeypatch.setattr(workloads, "select", lambda only=None: [wl])
    with pytest.raises(RuntimeError):
        suite.run(quick=True, repeats=1, only="tiny-roof", floors={})


def test_a_peer_that_compiles_has_its_first_call_reported_apart(monkeypatch):
    calls = []

    def compiling(a):
        calls.append(1)
        if len(calls) == 1:
            import time

            time.sleep(0.05)

    wl = _tiny_workload(RuntimeError("x"))
    wl.contenders[2:] = [harness.Contender("keops-like", harness.PEER, compiling, compiles="g++")]
    monkeypatch.setattr(workloads, "select", lambda only=None: [wl])
    row = next(r for r in suite.run(quick=True, repeats=1, only="tiny-roof", floors={}) if r["contender"] == "keops-like")
    assert row["compile_s"] >= 0.04 and row["first_call_s"] >= 0.05 and row["median_s"] < row["first_call_s"]
    assert row["note"].startswith("first call 0.") and "compiles with g++" in row["note"]
    assert row["floor_fraction"] is None and row["bytes_read"] > 0  # no floors measured: the cost is kept


# ---------------------------------------------------------------- JSON and --compare
def test_json_round_trip_with_floors(tmp_path, capsys):
    meta = {"floors": FLOORS, "load_before": [0.5, 0.4, 0.3], "load_after": [0.6, 0.4, 0.3], "cores": 2}
    path = tmp_path / "run.json"
    report.save_run(path, ROWS, meta)
    assert json.loads(path.read_text())["format"] == "fastrbf-bench/2"
    assert report.load_run(path) == (meta, ROWS)
    bench.main(["--from", str(path)])
    out = capsys.readouterr().out
    assert "floors (2 threads, measured in 2.0 s): DGEMM 100 / SGEMM 200 GFLOP/s (openblas 0.3.31 SkylakeX)" in out
    assert "floor (exp) 20.0 ms" in out and " 50%" in out and "not installed" in out


def test_compare_with_an_older_file_without_the_new_fields(tmp_path, capsys):
    new_keys = {"floor_bound", "floor_s", "floor_fraction", "achieved_rate", "achieved_unit", "flops", "bytes_read",
                "bytes_written", "exps", "unavailable", "note"}
    old_rows = [{k: v for k, v in r.items() if k not in new_keys} for r in ROWS[:2]]
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "fastrbf-bench/2", "meta": {"cores": 2}, "rows": old_rows}))
    new = tmp_path / "new.json"
    report.save_run(new, [dict(r, median_s=2 * r["median_s"], min_s=2 * r["min_s"], q1_s=2 * r["q1_s"],
                               q3_s=2 * r["q3_s"], times_s=[2 * r["times_s"][0]]) if r["median_s"] else r for r in ROWS],
                    {"floors": FLOORS})
    bench.main(["--from", str(new), "--compare", str(old)])
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "peer slower" in out and "only in new" in out
    bench.main(["--from", str(old)])
    out = capsys.readouterr().out
    assert "peak mem  floor" in out and "floors (" not in out
    assert next(ln for ln in out.splitlines() if ln.startswith("  fastrbf ")).endswith(" -")


# ---------------------------------------------------------------- settling between timed calls
def _busy(seconds):
    """A thread that keeps a core busy for ``seconds`` without holding the GIL (hashing
    a large buffer releases it), as a BLAS or OpenMP pool spinning after a call does."""
    import hashlib
    import threading
    import time

    def spin():
        buf = bytes(1 << 16)
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            hashlib.sha256(buf).digest()

    t = threading.Thread(target=spin, daemon=True)
    t.start()
    return t


@pytest.fixture(params=["thread states", "cpu time"])
def how(request, monkeypatch):
    """settle() by the threads' states (/proc), and by the process's CPU time where those
    cannot be read."""
    if request.param == "cpu time":
        monkeypatch.setattr(roofline, "_running_threads", lambda: None)
    elif roofline._running_threads() is None:
        pytest.fail("/proc/self/task cannot be read here")
    return request.param


def test_running_threads_sees_a_busy_thread():
    if roofline._running_threads() is None:
        pytest.fail("/proc/self/task cannot be read here")
    t = _busy(0.3)
    import time

    time.sleep(0.02)
    seen = max(roofline._running_threads() for _ in range(20))
    t.join()
    assert seen >= 1


def test_settle_waits_for_busy_helper_threads(how):
    t = _busy(0.15)
    waited = roofline.settle(max_s=2.0)
    assert waited >= 0.1  # (the thread was busy for 0.15 s from just before the wait)
    assert not t.is_alive() or waited >= 0.15 - 0.01
    t.join()


def test_settle_gives_up_after_max_s(how):
    t = _busy(1.0)
    waited = roofline.settle(max_s=0.1)
    assert 0.1 <= waited < 0.5
    t.join()


def test_timed_calls_settle_first(monkeypatch):
    calls = []
    monkeypatch.setattr(harness, "settle", lambda: calls.append("settle"))
    harness.time_rounds([lambda a: calls.append("a"), lambda a: calls.append("b")], {}, rounds=2, min_rounds=2)
    assert calls[0::2] == ["settle"] * 4 and sorted(calls[1::2]) == ["a", "a", "b", "b"]
