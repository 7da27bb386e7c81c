"""The benchmark harness: what a workload and its contenders are, and how they are timed,
summarised and compared; the compile and import times, measured in fresh processes.

The workloads themselves are in :mod:`fastrbf.bench.workloads` (one module per family),
:mod:`fastrbf.bench.suite` runs them through this harness, and
:mod:`fastrbf.bench.report` turns the rows into the table.  This module imports no
workload, so the families build on it and it stays the bottom layer of the package.

Each workload has a data set (seeded) at one or more sizes, a measure of work (for the
throughput), its essential cost (flops, bytes, exps: :class:`~fastrbf.bench.roofline.Cost`,
for the fraction of the machine's floor) and its contenders: fastrbf, the plain NumPy reference
(:mod:`fastrbf.reference`), the peers (scikit-learn, SciPy, faiss, scikit-learn-intelex,
pykeops, the NumPy norm trick; the ones users would pick instead are listed even when
they are not installed or fail here, with the reason in their row) and at most one *baseline*: a hardware floor (LAPACK ``dpotrf``
alone: what a Cholesky cannot beat) or another reference point named by its label (the
functional call a scikit-learn wrapper makes, in-memory k-means under dask).

**Timing.**  All contenders of a workload are first warmed up (untimed calls until
:data:`WARMUP_QUICK_S` / :data:`WARMUP_S` seconds are spent; the first call compiles
fastrbf's kernels on a cold cache), then timed in *rounds*: one call of every contender
per round, in an order shuffled each round (seeded), so a burst of load from other
processes falls on all contenders alike instead of on whichever was being timed.  Before
each timed call the harness waits until the process's other threads are idle
(:func:`settle`): OpenBLAS's threads spin for about 0.1 s after a multi-threaded call,
and a contender timed right after a BLAS-heavy one (the NumPy reference, the norm
trick, scikit-learn's GEMM) ran on the cores they left, up to 2x slower.  Rounds
go on up to :data:`QUICK_ROUNDS` / :data:`FULL_ROUNDS`; a contender sits out the
remaining rounds once its timed calls add up to its time budget (:data:`QUICK_BUDGET_S`
/ :data:`FULL_BUDGET_S`) and :data:`MIN_ROUNDS` are done (after :data:`SLOW_ROUNDS`
when its warm-up call took over :data:`SLOW_CALL_S`), so a slow NumPy reference does
not cut the rounds of the fast contenders short.  Paired ratios use the rounds both
contenders took part in.  Each row
reports the minimum, the median and the quartiles of its per-round times (quartiles
by linear interpolation, ``numpy.percentile``); the *spread* is the interquartile range.
One warm-up call of each contender (the second for fastrbf, the first may compile) runs
under ``tracemalloc`` for its *peak traced memory* (NumPy's allocations are traced;
numba's small per-thread tiles are not).

**Ratios and verdicts.**  Ratios are *paired*: for each round, the other contender's
time over this row's time in the same round; a row's ratio is the median over the
rounds.  ``ratio_vs_best_peer`` (fastrbf rows) is against the peer with the lowest
median time, ``ratio_vs_numpy`` against the NumPy reference (or NumPy
build-then-multiply for gram-matvec), ``ratio_vs_baseline`` against the workload's
baseline.  A ratio above 1 means this row is faster.  The verdict against the best peer
(:func:`verdict`) is ``"faster"`` when the lower quartile of the paired ratios is above
``1 + VERDICT_MARGIN``, ``"slower"`` when the upper quartile is below
``1 / (1 + VERDICT_MARGIN)``, and ``"within noise"`` otherwise: at least three rounds in
four must agree, by more than the margin.  A contender too slow above the quick size
(the broadcast reference on high-d data) is listed with ``median_s=None`` and a note.

**Compile and import.**  :func:`measure_compile` times the cold first call of public
functions (:data:`fastrbf.compile.TARGETS`), each in a fresh process with an empty
numba cache, and ``import fastrbf`` after ``import numba``; see :data:`COMPILE_GOALS`.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .roofline import Cost, settle

FASTRBF, NUMPY, PEER, FLOOR, BASELINE = "fastrbf", "numpy", "peer", "floor", "baseline"
#: what each kind of contender is, in the table's legend and the figure
KIND_NAMES = {FASTRBF: "fastrbf", PEER: "peer", NUMPY: "NumPy reference", FLOOR: "hardware floor",
              BASELINE: "baseline"}


@dataclass
class Contender:
    """One implementation of a workload: ``fn(data)`` runs it once.

    A peer that cannot run here keeps its row: ``missing`` says why (``"not installed"``,
    ``"failed: ImportError"``) and ``note`` the details for the legend.  ``note`` may
    also be a callable, called once after the rounds, giving what the legend should say
    about the row (the code path a peer ran).  ``compiles`` names what its first call
    compiles (``"g++"``): that call is part of the untimed warm-up and its extra time is
    reported apart.
    """

    label: str
    kind: str  # FASTRBF, NUMPY, PEER, FLOOR (a real hardware/LAPACK floor) or BASELINE (another reference point)
    fn: Callable[[dict], Any]
    full: bool = True  # also run above the quick size (False: too slow, quick size only)
    missing: str = ""  # why it cannot run here (no warm-up, no rounds; a row with this in the time column)
    note: str | Callable[[], str] = ""  # the legend's note on this row
    compiles: str = ""  # what its first call compiles (reported apart from the timed rounds)


@dataclass
class Workload:
    """A benchmark workload: data, work measure and contenders."""

    name: str
    setup: Callable[[Any], dict]  # setup(size) -> dict of arrays, size one of `sizes`
    work: Callable[[dict], float]  # work(data) -> float, in `unit`
    unit: str
    contenders: list[Contender] = field(default_factory=list)
    describe: Callable[[dict], str] | None = None  # describe(data) -> str
    accuracy: Callable[[dict], str] | None = None  # accuracy(data) -> str, after the contenders ran (a note in the legend)
    teardown: Callable[[dict], None] | None = None  # teardown(data): release what setup started (a dask cluster)
    sizes: tuple = ()  # ascending; the first is the quick size, --full runs them all
    cost: Callable[[dict], Cost] | None = None  # cost(data): the essential work of one call (the roofline)


# ---------------------------------------------------------------- timing
#: contenders slower than this per call (warm-up) get at most SLOW_ROUNDS timed rounds
SLOW_CALL_S = 2.0
SLOW_ROUNDS = 3
#: untimed warm-up calls go on until this many seconds are spent (at least one call):
#: the first few large allocations of a process, and the first after the host took
#: freed memory back, were measured 5-10x slower than the steady state on this machine
WARMUP_S = 0.5
#: the same for the quick sizes (their buffers are small)
WARMUP_QUICK_S = 0.25
#: timed rounds per workload at most (quick, full sizes) and at least (unless slow)
QUICK_ROUNDS, FULL_ROUNDS, MIN_ROUNDS = 15, 9, 5
#: seconds of timed calls per contender: once spent (and MIN_ROUNDS done) it sits out the remaining rounds
QUICK_BUDGET_S, FULL_BUDGET_S = 0.8, 10.0
#: a verdict needs the paired ratio's quartiles beyond 1 by this relative margin
VERDICT_MARGIN = 0.05
FASTER, SLOWER, WITHIN_NOISE = "faster", "slower", "within noise"


def _call(fn, data):
    """Seconds of one call (a ``self_timed`` callable returns its own time), on a
    process whose helper threads have gone idle (:func:`settle`)."""
    settle()
    t0 = time.perf_counter()
    r = fn(data)
    t = time.perf_counter() - t0
    return float(r) if getattr(fn, "self_timed", False) else t


def warm_up(fn, data, warmup_s=WARMUP_S, min_calls=1, trace_call=None):
    """Call ``fn(data)`` untimed until ``warmup_s`` seconds are spent and ``min_calls`` are made.

    Parameters
    ----------
    trace_call : int, optional
        Run this call (1: the first) under :mod:`tracemalloc` for the peak traced
        memory (one call after ``min_calls`` is made if the warm-up ended before).

    Returns
    -------
    first, last : float
        Wall seconds of the first call (which compiles on a cold cache) and of the last
        (the steady state when more than one call was made).
    peak : int or None
        Peak traced bytes of the traced call (None without ``trace_call``).

    Examples
    --------
    >>> first, last, peak = warm_up(lambda a: [0] * 1000, {}, warmup_s=0.0, min_calls=2, trace_call=2)
    >>> first > 0 and last > 0 and peak >= 8000
    True
    """
    t_start = time.perf_counter()
    first = None
    calls = 0
    peak = None
    while True:
        calls += 1
        traced = calls == trace_call
        if traced:
            tracemalloc.start()
            tracemalloc.reset_peak()
        try:
            t0 = time.perf_counter()
            fn(data)
            t1 = time.perf_counter()
        finally:
            if traced:
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
        first = t1 - t0 if first is None else first
        if t1 - t_start >= warmup_s and calls >= max(min_calls, trace_call or 0):
            return first, t1 - t0, peak


def time_rounds(fns, data, *, rounds, budget_s=float("inf"), min_rounds=MIN_ROUNDS, seed=0, caps=None):
    """Time callables in interleaved rounds: one call of each per round, in an order
    shuffled every round, so load from other processes falls on all of them alike.

    Parameters
    ----------
    fns : list of callable
        ``fn(data)`` runs a contender once (already warmed up).  A callable with a true
        ``self_timed`` attribute returns its own time in seconds, used instead of the
        wall time (per-iteration peers).
    data : dict
        The workload's arrays.
    rounds : int
        Rounds at most.
    budget_s : float
        Seconds per callable: once its timed calls add up to this much, and
        ``min_rounds`` are done, a callable sits out the remaining rounds (so a slow
        NumPy reference does not cut the rounds of the fast contenders short).
    min_rounds : int
        Rounds at least (unless capped).
    seed : int
        Seed of the shuffled orders.
    caps : list of int, optional
        Rounds at most per callable (a slow one takes part in the first rounds only).

    Returns
    -------
    list of list of float
        ``times[i][r]``: seconds of ``fns[i]`` in round ``r``.

    Examples
    --------
    >>> times = time_rounds([lambda a: sum(a["x"]), lambda a: max(a["x"])], {"x": [1, 2]}, rounds=4)
    >>> [len(t) for t in times]
    [4, 4]
    """
    order = list(range(len(fns)))
    shuffle = random.Random(seed).shuffle
    times: list = [[] for _ in fns]
    for r in range(max(1, rounds)):
        shuffle(order)
        active = [i for i in order if (caps is None or r < max(1, caps[i]))
                  and (r < min_rounds or sum(times[i]) < budget_s) and len(times[i]) == r]
        if not active:
            break
        for i in active:
            times[i].append(_call(fns[i], data))
    return times


def time_call(fn, data, repeats, budget_s=20.0, warmup_s=WARMUP_S):
    """Median seconds of ``fn(data)`` over ``repeats`` calls, after warm-up (one contender alone).

    Examples
    --------
    >>> time_call(lambda a: sum(a["x"]), {"x": [1, 2]}, 3, warmup_s=0.0) > 0
    True
    """
    first, last, _ = warm_up(fn, data, warmup_s)
    if last > SLOW_CALL_S:
        repeats = min(repeats, SLOW_ROUNDS)
    return float(np.median(time_rounds([fn], data, rounds=repeats, budget_s=budget_s, min_rounds=1)[0]))


def summarize(times):
    """Minimum, median and quartiles of per-round times (linear interpolation).

    Examples
    --------
    >>> summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    {'rounds': 5, 'min_s': 1.0, 'median_s': 3.0, 'q1_s': 2.0, 'q3_s': 4.0}
    """
    q1, med, q3 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"rounds": len(times), "min_s": float(min(times)), "median_s": med, "q1_s": q1, "q3_s": q3}


def paired_ratio(other, this):
    """Per-round ratios ``other[r] / this[r]`` summarised as (median, lower quartile, upper quartile).

    Above 1: ``this`` took less time than ``other`` in that round.

    Examples
    --------
    >>> paired_ratio([2.0, 4.0, 2.2], [1.0, 2.0, 1.0])
    (2.0, 2.0, 2.1)
    """
    n = min(len(other), len(this))  # rounds in common (a slow contender takes part in the first rounds only)
    r = np.asarray(other[:n], dtype=float) / np.asarray(this[:n], dtype=float)
    med, q1, q3 = (float(v) for v in np.percentile(r, [50, 25, 75]))
    return med, q1, q3


def verdict(q1, q3, margin=VERDICT_MARGIN):
    """Verdict of a paired ratio (other's time over this row's) from its quartiles.

    ``"faster"`` when the lower quartile is above ``1 + margin``, ``"slower"`` when the
    upper quartile is below ``1 / (1 + margin)``, otherwise ``"within noise"`` (the
    interquartile range of the ratio reaches the band around 1).

    Examples
    --------
    >>> verdict(1.2, 1.5), verdict(0.5, 0.9), verdict(0.9, 1.3), verdict(1.01, 1.5)
    ('faster', 'slower', 'within noise', 'within noise')
    """
    if q1 > 1.0 + margin:
        return FASTER
    if q3 < 1.0 / (1.0 + margin):
        return SLOWER
    return WITHIN_NOISE


def peak_memory(fn, data):
    """Peak traced memory of one call, measured with :mod:`tracemalloc`.

    Parameters
    ----------
    fn : callable
        ``fn(data)`` runs the contender once.
    data : dict
        The workload's arrays.

    Returns
    -------
    int
        Peak bytes traced during the call (NumPy allocations are traced; memory that
        numba or BLAS allocate outside Python's allocator hooks is not).
    """
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn(data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def load_average():
    """The 1-, 5- and 15-minute load averages (None where the platform has none)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def busy_warning(load):
    """A warning line when the 1-minute load average exceeds the core count, else None.

    Examples
    --------
    >>> busy_warning([0.5, 0.5, 0.5]) is None
    True
    >>> busy_warning([99.0, 9.0, 9.0]).startswith("warning: load average 99.00")
    True
    """
    cores = os.cpu_count() or 1
    if load and load[0] > cores:
        return (f"warning: load average {load[0]:.2f} is above the {cores} cores: other processes compete for the "
                f"CPU; verdicts may be unreliable (--threads 1 compares single-threaded speed, which a busy machine "
                f"disturbs less)")
    return None


def format_duration(s: float) -> str:
    """A duration of the progress lines: seconds up to 90, minutes beyond.

    Examples
    --------
    >>> format_duration(42.0), format_duration(150.0)
    ('42 s', '2.5 min')
    """
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


def format_seconds(t: float | None) -> str:
    """Seconds as the table writes them: ``"-"`` for None, else us, ms or s.

    Examples
    --------
    >>> format_seconds(None), format_seconds(2e-5), format_seconds(0.0123), format_seconds(2.5)
    ('-', '20 us', '12.3 ms', '2.50 s')
    """
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def add_ratios(wl_rows: list[dict]) -> None:
    """Paired ratios and verdicts of one workload's rows (in place)."""
    timed = [r for r in wl_rows if r["times_s"]]
    numpy_r = next((r for r in timed if r["kind"] == NUMPY), None)
    peers = [r for r in timed if r["kind"] == PEER]
    best = min(peers, key=lambda r: r["median_s"]) if peers else None
    base = next((r for r in timed if r["kind"] in (FLOOR, BASELINE)), None)
    for r in wl_rows:
        r.update(ratio_vs_numpy=None, ratio_vs_best_peer=None, ratio_vs_best_peer_q1=None, ratio_vs_best_peer_q3=None,
                 best_peer=None, verdict=None, ratio_vs_baseline=None, baseline=None, baseline_kind=None)
        if not r["times_s"]:
            continue
        if numpy_r is not None and r is not numpy_r:
            r["ratio_vs_numpy"] = paired_ratio(numpy_r["times_s"], r["times_s"])[0]
        if r["kind"] != FASTRBF:
            continue
        if best is not None:
            med, q1, q3 = paired_ratio(best["times_s"], r["times_s"])
            r.update(ratio_vs_best_peer=med, ratio_vs_best_peer_q1=q1, ratio_vs_best_peer_q3=q3,
                     best_peer=best["contender"], verdict=verdict(q1, q3))
        if base is not None:
            r.update(ratio_vs_baseline=paired_ratio(base["times_s"], r["times_s"])[0], baseline=base["contender"],
                     baseline_kind=base["kind"])


# ---------------------------------------------------------------- compile and import
#: the product's goals for a first call (seconds): cold first call per function (the
#: fast group: sqdist, gram, gram_matvec), the float32 call right after the float64
#: one, and a warm first call (kernels cached on disk) above the second call
COMPILE_GOALS: dict[str, Any] = {"cold_s": 4.0, "cold_fast_s": 2.0, "fast": ("sqdist", "gram", "gram_matvec"), "float32_s": 2.0,
                 "warm_extra_s": 0.05}
#: the targets measured by a quick run (all of ``fastrbf.compile.TARGETS`` otherwise)
QUICK_COMPILE_TARGETS = ("sqdist", "gram", "gram_matvec", "kernel_ridge")

_COMPILE_SCRIPT = r"""
import json, sys, time
import numpy as np
from fastrbf.compile import TARGETS
fn = TARGETS[sys.argv[1]]
startup = None
if sys.argv[2:] == ["warm"]:  # numba's own once-per-process start-up, paid before fastrbf's first call
    import numba
    one, two = numba.njit(lambda x: x + 1.0), numba.njit(lambda x: x + 2.0)
    t0 = time.perf_counter(); one(1.0); t1 = time.perf_counter(); two(1.0); t2 = time.perf_counter()
    startup = max(0.0, (t1 - t0) - (t2 - t1))
def timed(dtype):
    w, c = time.perf_counter(), time.process_time()
    fn(dtype)
    return [time.perf_counter() - w, time.process_time() - c]
first = timed(np.float64)
second = timed(np.float64)
f32 = timed(np.float32)
print(json.dumps({"first": first, "second": second, "float32": f32, "numba_startup": startup}))
"""

_IMPORT_SCRIPT = r"""
import json, time
t0 = time.perf_counter()
import numba
t1 = time.perf_counter()
import fastrbf
t2 = time.perf_counter()
print(json.dumps({"numba": t1 - t0, "fastrbf": t2 - t1}))
"""


def package_root() -> str:
    """The directory holding the ``fastrbf`` package that is running: first on the path
    of the fresh processes, so they measure this copy and not another one installed.

    Examples
    --------
    >>> import fastrbf
    >>> os.path.join(package_root(), "fastrbf", "__init__.py") == os.path.abspath(fastrbf.__file__)
    True
    """
    import fastrbf

    return os.path.dirname(os.path.dirname(os.path.abspath(fastrbf.__file__)))


def _child(script, args, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env["PYTHONPATH"] = os.pathsep.join([package_root()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(args) or 'import'}` failed in a fresh process:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compile_goal_misses(row):
    """The :data:`COMPILE_GOALS` a compile row misses, as short phrases (empty: all met).

    Examples
    --------
    >>> compile_goal_misses({"contender": "gram", "median_s": 2.5, "float32_extra_s": 0.5, "warm_extra_s": 0.01})
    ['cold > 2 s']
    """
    g = COMPILE_GOALS
    cold_goal = g["cold_fast_s"] if row["contender"] in g["fast"] else g["cold_s"]
    misses = []
    if row["median_s"] is not None and row["median_s"] > cold_goal:
        misses.append(f"cold > {cold_goal:g} s")
    if row.get("float32_extra_s") is not None and row["float32_extra_s"] > g["float32_s"]:
        misses.append(f"float32 > {g['float32_s']:g} s")
    if row.get("warm_extra_s") is not None and row["warm_extra_s"] > g["warm_extra_s"]:
        misses.append(f"warm > {g['warm_extra_s'] * 1e3:g} ms")
    return misses


def measure_compile(quick=True, targets=None, import_repeats=3, log=None):
    """Cold first-call times of public functions and the import time of fastrbf.

    Each target of :data:`fastrbf.compile.TARGETS` (a tiny float64 call) runs in a
    fresh process with an empty numba cache (a new temporary ``NUMBA_CACHE_DIR``):
    its first call (compiles), a second call, then a float32 call (compiles the float32
    kernels).  A second fresh process on the now filled cache times the *warm* first
    call: what it takes above the second call is loading the cached kernels.  That
    process first starts numba itself (two trivial functions compiled: the first one's
    extra time over the second is numba's once-per-process start-up, which any numba
    code pays on its first call, cached or not), so the warm figure is fastrbf's own.
    ``import fastrbf`` is timed right after ``import numba`` in ``import_repeats``
    fresh processes (the median; the quartiles give the spread).

    Parameters
    ----------
    quick : bool
        Only :data:`QUICK_COMPILE_TARGETS` (default) or every target.
    targets : sequence of str, optional
        Names of targets to measure instead.
    import_repeats : int
        Fresh processes for the import time (0: not measured).
    log : callable, optional
        Called with a progress line per target.

    Returns
    -------
    list of dict
        One row per target (``workload="compile"``, ``kind="compile"``, ``contender``
        the target, ``median_s`` the cold first call's wall seconds, ``cold_cpu_s``
        its CPU seconds, ``float32_extra_s``, ``warm_extra_s`` (warm first call minus
        second call, after numba's start-up), ``numba_startup_s``, ``goal_misses`` (:func:`compile_goal_misses`)), then one row
        ``contender="import fastrbf (after numba)"``, ``kind="import"``.
    """
    from fastrbf.compile import TARGETS

    say = log or (lambda s: None)
    names = list(targets) if targets is not None else (list(QUICK_COMPILE_TARGETS) if quick else sorted(TARGETS))
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise ValueError(f"`targets` must name entries of fastrbf.compile.TARGETS; got {unknown!r}.")
    rows = []
    t0 = time.perf_counter()
    base = dict(workload="compile", size=None, n=None, dtype="float64", unit="s", accuracy="", note="",
                rounds=1, q1_s=None, q3_s=None, throughput=None, peak_mem_bytes=None, ratio_vs_numpy=None,
                ratio_vs_best_peer=None, verdict=None, ratio_vs_baseline=None)
    for k, name in enumerate(names):
        say(f"[compile {k + 1}/{len(names)}] {name}: first call in a fresh process with an empty numba cache; "
            f"{format_duration(time.perf_counter() - t0)} elapsed")
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="fastrbf-cache-") as cache:
            cold = _child(_COMPILE_SCRIPT, [name], cache)
            warm = _child(_COMPILE_SCRIPT, [name, "warm"], cache)
        row = dict(base, contender=name, kind="compile", shape="tiny float64 call, fresh process",
                   median_s=cold["first"][0], min_s=cold["first"][0], times_s=[cold["first"][0]],
                   cold_cpu_s=cold["first"][1], float32_extra_s=cold["float32"][0],
                   warm_first_s=warm["first"][0], second_s=warm["second"][0],
                   warm_extra_s=warm["first"][0] - warm["second"][0], numba_startup_s=warm["numba_startup"],
                   load_before=load_before,
                   load_after=load_average())
        row["goal_misses"] = compile_goal_misses(row)
        say(f"  {name}: cold {row['median_s']:.2f} s (CPU {row['cold_cpu_s']:.2f} s), float32 +"
            f"{row['float32_extra_s']:.2f} s, warm first call +{row['warm_extra_s'] * 1e3:.1f} ms "
            f"(after numba's own start-up, {row['numba_startup_s'] * 1e3:.0f} ms)")
        rows.append(row)
    if import_repeats:
        load_before = load_average()
        with tempfile.TemporaryDirectory(prefix="fastrbf-cache-") as cache:
            imp = [_child(_IMPORT_SCRIPT, [], cache) for _ in range(import_repeats)]
        t = [d["fastrbf"] for d in imp]
        rows.append(dict(base, contender="import fastrbf (after numba)", kind="import", shape="fresh processes",
                         **summarize(t), times_s=t, numba_import_s=float(np.median([d["numba"] for d in imp])),
                         load_before=load_before, load_after=load_average()))
        say(f"  import fastrbf after numba: median {rows[-1]['median_s'] * 1e3:.0f} ms of {import_repeats} processes")
    return rows
