"""Ahead-of-time compilation (``python -m fastrbf.compile``), compile-on-demand
specialisation, and the notice printed while a first call compiles.

Cold compilations need fresh processes with an empty numba cache: each test here
starts a few, on tiny inputs."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fastrbf import KERNELS, _notice
from fastrbf.compile import TARGETS, main, select

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# prints the names of the fastrbf functions that numba compiles (not loads) while the
# snippet runs, one per line, prefixed with "COMPILED "
LISTEN = """
import numpy as np
from numba.core import event

class _L(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        if f.__module__.startswith("fastrbf."):
            print("COMPILED", f.__name__, flush=True)

    def on_end(self, ev):
        pass

event.register("numba:compile", _L())
import fastrbf
X = np.random.default_rng(0).random((40, 3))
"""


def _env(cache_dir, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_CURRENT_TEST", "FASTRBF_QUIET", "FASTRBF_CACHE")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    env.update(extra)
    return env


def _python(code, cache_dir, **extra):
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(cache_dir, **extra), cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def _compiled(stdout):
    return [line.split()[1] for line in stdout.splitlines() if line.startswith("COMPILED ")]


def test_cli_fills_the_cache(tmp_path):
    cmd = [sys.executable, "-m", "fastrbf.compile", "--only", "sqdist", "lloyd_update", "--dtype", "float32",
           "--jobs", "2"]
    res = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stdout.splitlines()
    assert sorted(line.split()[1:3] for line in lines[:2]) == [["lloyd_update", "float32"], ["sqdist", "float32"]]
    assert lines[0].startswith("[1/2] ") and lines[1].startswith("[2/2] ")
    assert lines[2].startswith("2 of 2 compiled in ")
    # a fresh process finds every kernel of sqdist (both forms) in the cache
    res = _python(LISTEN + """
Xf = X.astype(np.float32)
fastrbf.sqdist(Xf)
fastrbf.sqdist(Xf, Xf[:7])
print("ok")
""", tmp_path)
    assert "ok" in res.stdout
    assert _compiled(res.stdout) == []
    # float64 was not asked for: it compiles (so the check above can fail)
    res = _python(LISTEN + "fastrbf.sqdist(X)\n", tmp_path, FASTRBF_QUIET="1")
    assert "pairwise_upper" in _compiled(res.stdout)


def test_cli_covers_every_kmeans_assignment_path(tmp_path):
    """After ``python -m fastrbf.compile --only kmeans lloyd``, k-means and the Lloyd
    steps on larger shapes compile nothing, whichever assignment path the shape takes
    (direct differences, the micro-kernel's float32 ranking with the compiled loop,
    the certified GEMM), brute force or bounded, with or without a report per
    iteration."""
    cmd = [sys.executable, "-m", "fastrbf.compile", "--only", "kmeans", "lloyd", "--dtype", "float64"]
    res = subprocess.run(cmd, env=_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    code = LISTEN + """
from fastrbf.cluster import _assign
rng = np.random.default_rng(1)
for d, K in ((4, 16), (16, 64), (60, 20)):
    Xb = rng.standard_normal((3000, d))
    print("PATH", _assign.Assigner(Xb, 1).path(K, Xb.dtype))
    for algorithm in ("lloyd", "bounded"):
        fastrbf.kmeans(Xb, K, seed=0, max_iter=8, algorithm=algorithm)
    fastrbf.kmeans(Xb, K, init=Xb[:K], max_iter=8, algorithm="bounded", progress=lambda info: None)
    labels, _ = fastrbf.lloyd_assign(Xb, Xb[:K])
    fastrbf.lloyd_update(Xb, labels, K)
"""
    res = _python(code, tmp_path)
    assert [line.split()[1] for line in res.stdout.splitlines() if line.startswith("PATH")] == [
        "direct", "centred32", "gemm"]
    assert _compiled(res.stdout) == []
    # float32 was not asked for: the ranked path compiles (so the check above can fail)
    res = _python(LISTEN + "Xf = np.random.default_rng(1).standard_normal((3000, 16)).astype(np.float32)\n"
                  "fastrbf.kmeans(Xf, 64, seed=0, max_iter=8)\n", tmp_path, FASTRBF_QUIET="1")
    compiled = _compiled(res.stdout)
    # the kernels the loop calls through their addresses report their compilations too
    assert {"fit_loop", "bound_rows", "certify_direct", "update_partials", "centre_bounds"} <= set(compiled)


ADDRESSED = LISTEN + """
import os
from numba import njit, types
from fastrbf._jit.llvm.addressed import addressed, call, check, table
from fastrbf._jit.cluster.lloyd import reduce_partials

sig = types.void(types.float64[:, :, ::1], types.float64[:, ::1], types.float64[:, ::1], types.float64[::1])
k = addressed(reduce_partials, sig)
assert addressed(reduce_partials, sig) is k

@njit
def through(tab, a, b, c, e):
    call(tab, 0, (a, b, c, e))

rng = np.random.default_rng(2)
part, partw = rng.standard_normal((5, 4, 3)), rng.standard_normal((5, 4))
out, ow = np.empty((4, 3)), np.empty(4)
tab = table(k)
through(tab, part, partw, out, ow)
check(tab)
assert np.array_equal(out, part.sum(axis=0)) and np.array_equal(ow, partw.sum(axis=0))
print("CACHE", sorted(f for _, _, files in os.walk(os.environ["NUMBA_CACHE_DIR"]) for f in files
                      if "reduce_partials" in f))
"""


def test_addressed_kernels_compile_once_and_are_cached(tmp_path):
    """A kernel called through its address (``addressed``) computes what the kernel
    does, compiles on its first use (the compile event fires), is cached on disk (a
    second process compiles nothing), and is not cached under ``FASTRBF_CACHE=0``."""
    first = _python(ADDRESSED, tmp_path / "cache", FASTRBF_QUIET="1")
    assert "reduce_partials" in _compiled(first.stdout)
    second = _python(ADDRESSED, tmp_path / "cache", FASTRBF_QUIET="1")
    assert "reduce_partials" not in _compiled(second.stdout)
    assert "CACHE []" not in second.stdout
    off = _python(ADDRESSED, tmp_path / "off", FASTRBF_QUIET="1", FASTRBF_CACHE="0")
    assert "reduce_partials" in _compiled(off.stdout)
    assert "CACHE []" in off.stdout


def test_a_call_compiles_only_the_kernel_it_applies(tmp_path):
    res = _python(LISTEN + """
fastrbf.sqdist(X, X[:7])
print("GRAM")
fastrbf.gram(X, X[:7], kernel="gaussian")
""", tmp_path, FASTRBF_QUIET="1")
    before, after = res.stdout.split("GRAM")
    impls = {"_" + name for name in KERNELS} | {"_none"}
    # sqdist compiles the distance kernel and no kernel function
    assert "pairwise_rows" in _compiled(before)
    assert set(_compiled(before)) & impls == {"_none"}
    # gram with the gaussian kernel compiles the gaussian and nothing of the other kernels
    assert set(_compiled(after)) & impls == {"_gaussian"}
    # no helper is compiled twice for one kernel function (a literal argument would
    # make a second specialisation)
    names = _compiled(before)
    assert all(names.count(h) == 1 for h in ("fill_block", "pairwise_rows")), names
    # fill_rows is inlined into its callers at numba-IR level: no compile of its own
    assert "fill_rows" not in names


NOTICE = "fastrbf: compiling numba kernels for the first call with float32"


def test_notice_once_on_a_cold_call_not_when_warm(tmp_path):
    code = LISTEN + """
Xf = X.astype(np.float32)
fastrbf.sqdist(Xf, Xf[:7])
fastrbf.gram(Xf, Xf[:7], kernel="laplacian")
"""
    res = _python(code, tmp_path)
    assert res.stderr.count("fastrbf: compiling numba kernels") == 1, res.stderr
    assert NOTICE in res.stderr
    assert 'run "python -m fastrbf.compile" to do this ahead' in res.stderr
    res = _python(code, tmp_path)  # warm: loaded from the cache, nothing compiles
    assert _compiled(res.stdout) == []
    assert "fastrbf: compiling" not in res.stderr


@pytest.mark.parametrize("how", ["environment", "python"])
def test_notice_can_be_silenced(tmp_path, how):
    extra = {"FASTRBF_QUIET": "1"} if how == "environment" else {}
    pre = "" if how == "environment" else "import fastrbf.compile\nfastrbf.compile.notice(False)\n"
    res = _python(LISTEN + pre + "fastrbf.sqdist(X.astype(np.float32))\n", tmp_path, **extra)
    assert "pairwise_upper" in _compiled(res.stdout)  # it did compile
    assert "fastrbf: compiling" not in res.stderr


def test_notice_setting(monkeypatch):
    prev = _notice.set_enabled(None)
    try:
        monkeypatch.delenv("FASTRBF_QUIET", raising=False)
        assert not _notice.allowed()  # default: silent under pytest
        monkeypatch.delenv("PYTEST_CURRENT_TEST")
        assert _notice.allowed()
        monkeypatch.setenv("FASTRBF_QUIET", "1")
        assert not _notice.allowed()
        _notice.set_enabled(True)
        assert _notice.allowed()
    finally:
        _notice.set_enabled(prev)


@pytest.mark.parametrize("argv, match", [
    (["--dtype", "float16"], "--dtype"),
    (["--only", "no_such_function"], "`--only` must name targets"),
    (["--jobs", "0"], "`--jobs` must be an int >= 1; got 0"),
    (["--jobs", "two"], "--jobs"),
    (["--frobnicate"], "--frobnicate"),
])
def test_bad_arguments_exit_2_naming_the_argument(capsys, argv, match):
    assert main(argv) == 2
    assert match in capsys.readouterr().err


def test_select_rejects_unknown_names():
    with pytest.raises(ValueError, match=r"`--only` must name targets or prefixes of them \(.*\); got 'nope'\."):
        select(["nope"])
    assert select(["kernel_ridge"]) == ["kernel_ridge", "kernel_ridge[nystrom-pcg]"]
    assert select(None) == list(TARGETS)


def test_no_cache_to_fill_exits_2(monkeypatch, capsys):
    monkeypatch.setenv("FASTRBF_CACHE", "0")
    assert main(["--only", "sqdist"]) == 2
    assert "FASTRBF_CACHE=0" in capsys.readouterr().err


def test_targets_take_a_dtype():
    for dtype in (np.float32, np.float64):
        assert TARGETS["lloyd_update"](dtype) is None


class _Ev:
    """A stand-in for numba's compile event on a fastrbf kernel taking float32 arrays."""

    def __init__(self):
        from numba import types

        def kernel():
            pass

        kernel.__module__ = "fastrbf._jit.fake"
        self.data = {"dispatcher": type("D", (), {"py_func": staticmethod(kernel)})(),
                     "args": (types.float32[:, :],)}


@pytest.mark.parametrize("pause, expected", [(0.0, 1), (0.6, 0)])
def test_notice_sums_the_compilations_of_one_stall(monkeypatch, capsys, pause, expected):
    # two compilations of 0.3 s each, 0.5 s allowed: together they pass the delay when
    # they follow each other (one stall), not when a pause longer than GAP parts them
    import time

    monkeypatch.setattr(_notice, "DELAY", 0.5)
    monkeypatch.setattr(_notice, "GAP", 0.3)
    monkeypatch.setattr(_notice, "_printed", False)
    monkeypatch.setattr(_notice, "_burst_end", -float("inf"))
    prev = _notice.set_enabled(True)
    listener, ev = _notice._Listener(), _Ev()
    try:
        for _ in range(2):
            listener.on_start(ev)
            time.sleep(0.3)
            listener.on_end(ev)
            time.sleep(pause)
    finally:
        _notice.set_enabled(prev)
    err = capsys.readouterr().err
    assert err.count(NOTICE) == expected, err


def test_partition_of_unity_compiles_each_helper_once(tmp_path):
    # a literal argument (0, -1) makes numba compile a helper a second time (seconds of a
    # cold fit): chunk_row in the patch fit and the kd-tree, _patch_value in the blend
    res = _python(LISTEN + """
y = np.sin(X.sum(axis=1))
fastrbf.partition_of_unity(X, y, patch_points=10).predict(X[:5])
""", tmp_path, FASTRBF_QUIET="1")
    names = _compiled(res.stdout)
    assert "patch_fit" in names and "blend" in names
    assert all(names.count(h) == 1 for h in ("chunk_row", "_patch_value", "patch_fit", "blend")), names


def test_kdtree_compiles_each_helper_once(tmp_path):
    res = _python(LISTEN + 'fastrbf.knn(X, X[:7], 3, method="tree")\n', tmp_path, FASTRBF_QUIET="1")
    names = _compiled(res.stdout)
    assert "build_nodes" in names and "knn_tree" in names
    assert all(names.count(h) == 1 for h in ("_select", "_partition", "insert", "chunk_row")), names
