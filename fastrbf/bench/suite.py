"""The run of the benchmark suite: the registered workloads through the harness, one row
per (workload, size, contender), then the compile and import rows.

:func:`run` is what ``python -m fastrbf.bench`` runs; the timing rules (warm-up,
interleaved rounds, budgets, verdicts) are those of :mod:`fastrbf.bench.harness`, the
workloads those of :mod:`fastrbf.bench.workloads`.  It sits above both, so neither
imports the other's layer.
"""

import contextlib
import os
import sys
import time

import numpy as np

from fastrbf import _threads

from . import harness, roofline, workloads
from .harness import (
    FASTRBF,
    FULL_BUDGET_S,
    FULL_ROUNDS,
    QUICK_BUDGET_S,
    QUICK_ROUNDS,
    SLOW_CALL_S,
    SLOW_ROUNDS,
    WARMUP_QUICK_S,
    WARMUP_S,
    add_ratios,
    format_duration,
    format_seconds,
    load_average,
    summarize,
    time_rounds,
    warm_up,
)


def n_of(size: int | tuple | list) -> int:
    """The leading number of a size (the N of the scaling section)."""
    return size[0] if isinstance(size, (tuple, list)) else size


def measure_floors(n_threads=None):
    """The machine's floors (:func:`fastrbf.bench.roofline.measure_floors`) on the threads
    a run with this ``n_threads`` uses (None: all cores)."""
    with _limit_threads(n_threads):
        return roofline.measure_floors(n_threads)


def quiet_threading_layer():
    """Take numba's own thread pool (``"workqueue"``) for numba's threading layer, unless
    ``NUMBA_THREADING_LAYER`` names one; before the layer starts (a later call does
    nothing).  fastrbf runs no numba parallel region, so the layer only starts when
    numba's thread count is asked or set, and its OpenMP layer's threads, in the
    system's ``libgomp``, made a peer's OpenMP loops in that same ``libgomp`` 30x slower
    (GPBoost's Vecchia likelihood: 0.5 s alone, 15 s beside them)."""
    import numba

    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]


@contextlib.contextmanager
def _limit_threads(n_threads):
    """Limit fastrbf (numba), BLAS and OpenMP (scikit-learn) threads for the block; None: no limit."""
    if n_threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with _threads.threads(n_threads) as n, threadpool_limits(limits=n, user_api="openmp"):
        yield


def run(quick=True, repeats=None, only=None, log=None, progress=False, n_threads=None, floors=None):
    """Run the workloads; return one dict per (workload, size, contender).

    Parameters
    ----------
    quick : bool
        The quick size of each workload (about two minutes on 2 cores once kernels are
        compiled); False: every size of each workload, up to the largest.
    repeats : int, optional
        Timed rounds at most (default :data:`~fastrbf.bench.harness.QUICK_ROUNDS` /
        :data:`~fastrbf.bench.harness.FULL_ROUNDS`; a
        contender takes part in fewer when they would not fit its time budget, see
        :func:`~fastrbf.bench.harness.time_rounds`).
    only : str, optional
        Run only the workloads whose name contains this string (``"compile"``: the
        compile and import times of :func:`~fastrbf.bench.harness.measure_compile`, which otherwise run last).
    log : callable, optional
        Called with each progress line (one per workload with an estimate of the time
        left, one per contender with its times).
    progress : bool
        Print the progress lines to standard error (when ``log`` is not given).
    n_threads : int, optional
        Limit every contender to this many threads (fastrbf's numba threads, BLAS and
        the OpenMP threads of scikit-learn); None: each uses all cores.  On a busy
        machine parallel code on oversubscribed cores slows down by amounts that differ
        from one implementation to the next and from one minute to the next, so
        ``n_threads=1`` gives verdicts that hold better from run to run.
    floors : dict, optional
        The machine's floors (:func:`measure_floors`) for the roofline fields; None:
        measured here, once, before the first workload (about 2-3 s); ``{}``: not
        measured (the rows keep their cost, without a floor fraction).

    Returns
    -------
    list of dict
        One row per (workload, size, contender), keys: ``workload``, ``size`` (as in
        ``Workload.sizes``), ``n`` (its leading number), ``shape`` (a description),
        ``accuracy`` (a note or ""), ``dtype``, ``contender``, ``kind`` (fastrbf, numpy,
        peer, floor or baseline), ``rounds``, ``times_s`` (seconds per round),
        ``min_s``, ``median_s``, ``q1_s``, ``q3_s`` (quartiles of the rounds),
        ``throughput`` (work per second at the median, in ``unit``), ``unit``,
        ``ratio_vs_numpy``, ``ratio_vs_best_peer`` with ``ratio_vs_best_peer_q1`` /
        ``_q3``, ``best_peer`` and ``verdict`` (:func:`~fastrbf.bench.harness.verdict`; fastrbf rows with a
        peer), ``ratio_vs_baseline`` with ``baseline`` (its label) and
        ``baseline_kind`` (floor or baseline), ``peak_mem_bytes`` (peak traced memory),
        ``threads`` (numba threads), ``blas`` (BLAS library, kernel and threads),
        ``load_before`` / ``load_after`` (load averages around the workload),
        ``note`` (the legend's note on the row), ``unavailable`` (``"not installed"``,
        ``"failed: <exception type>"`` or None), ``first_call_s`` (the first warm-up
        call), ``compile_s`` (for a contender that compiles on its first call, e.g.
        pykeops: that call's time beyond a steady one, untimed), and the roofline
        fields of :func:`fastrbf.bench.roofline.roofline_fields` (``floor_bound``,
        ``floor_s``, ``floor_fraction``, ``achieved_rate``, ``achieved_unit``,
        ``flops``, ``bytes_read``, ``bytes_written``, ``exps``).  Skipped, missing and
        failed contenders have ``median_s=None``; the rows of
        :func:`~fastrbf.bench.harness.measure_compile` follow with ``workload="compile"``.

    Examples
    --------
    >>> floors = dict(dgemm_gflops=50.0, sgemm_gflops=100.0, read_gbs=20.0, write_gbs=10.0)
    >>> rows = run(quick=True, repeats=1, only="sqdist-lowd/float32", floors=floors)
    >>> [r["contender"] for r in rows][:3]
    ['fastrbf', 'fastrbf out=', 'numpy reference']
    >>> all(r["median_s"] > 0 for r in rows), rows[0]["floor_bound"], 0 < rows[0]["floor_fraction"] < 1.5
    (True, 'mem', True)
    """
    import numba

    quiet_threading_layer()
    if log is None and progress:
        def log(s):
            print(s, file=sys.stderr, flush=True)
    say = log or (lambda s: None)
    max_rounds = repeats or (QUICK_ROUNDS if quick else FULL_ROUNDS)
    budget = QUICK_BUDGET_S if quick else FULL_BUDGET_S
    warmup_s = WARMUP_QUICK_S if quick else WARMUP_S
    todo = [(wl, size) for wl in workloads.select(only) for size in (wl.sizes[:1] if quick else wl.sizes)]
    if todo:
        say("numba cache of fastrbf's kernels is empty: the warm-up calls compile them as they come (minutes on a "
            "first run; cached on disk afterwards)" if _kernel_cache_is_cold() else
            "fastrbf's kernels are cached on disk (a kernel missing from the cache compiles on its first call)")
    rows = []
    t_run = time.perf_counter()
    steady: list = []  # seconds per workload without the first calls (compilation) beyond the warm-up budget
    with _limit_threads(n_threads):  # fastrbf, BLAS and OpenMP peers alike
        if todo and floors is None:
            say("measuring this machine's floors (GEMM, memory bandwidth, exp; about 3 s)")
            floors = roofline.measure_floors(n_threads)
            say("  " + roofline.format_floors(floors))
        for k, (wl, size) in enumerate(todo):
            t_wl = time.perf_counter()
            left = (f"about {format_duration(float(np.median(steady)) * (len(todo) - k))} left" if steady
                    else "time left known after the first workload")
            load_before = load_average()
            data = wl.setup(size)
            work = wl.work(data)
            cost = wl.cost(data) if wl.cost is not None else None
            shape = wl.describe(data) if wl.describe else ""
            active = [c for c in wl.contenders if (quick or c.full or size == wl.sizes[0]) and not c.missing]
            say(f"[{k + 1}/{len(todo)}] {wl.name} ({shape}): warming up {len(active)} contenders, then timing them in "
                f"rounds; {format_duration(time.perf_counter() - t_run)} elapsed, {left}")
            first_excess = 0.0
            caps = []
            peaks = {}
            firsts = {}
            failed = {}
            for c in list(active):
                # fastrbf's first call may compile (cold cache), as does a peer's that `compiles`: a
                # second call gives the steady time and the peak memory (compilation's allocations would be traced)
                n_first = 2 if c.kind == FASTRBF or c.compiles else 1
                try:
                    first, last, peaks[c.label] = warm_up(c.fn, data, warmup_s, min_calls=n_first,
                                                          trace_call=None if getattr(c.fn, "self_timed", False)
                                                          else n_first)
                except Exception as exc:  # a peer that cannot run here keeps a row that says why
                    if c.kind == FASTRBF:
                        raise
                    failed[c.label] = exc
                    active.remove(c)
                    say(f"  {c.label}: failed: {type(exc).__name__}: {exc}")
                    continue
                firsts[c.label] = (first, last)
                first_excess += max(0.0, first - max(last, warmup_s))
                caps.append(min(max_rounds, SLOW_ROUNDS) if last > SLOW_CALL_S else max_rounds)
                if (c.kind == FASTRBF or c.compiles) and first > 5.0 and first > 3 * last:
                    say(f"  {c.label}: first call {first:.1f} s (compiling{' with ' + c.compiles if c.compiles else ''}),"
                        f" then {format_seconds(last)}")
            times = (time_rounds([c.fn for c in active], data, rounds=max(caps), budget_s=budget, seed=k, caps=caps)
                     if active else [])
            by_label = dict(zip([c.label for c in active], times, strict=True))
            wl_rows = []
            for c in wl.contenders:
                row = dict(workload=wl.name, size=list(size) if isinstance(size, tuple) else size, n=n_of(size),
                           shape=shape, accuracy="", dtype=str(data["X"].dtype), contender=c.label, kind=c.kind,
                           unit=wl.unit, threads=numba.get_num_threads(), blas=_threads.blas_info(), note="",
                           unavailable=None, first_call_s=None, compile_s=None)
                t = by_label.get(c.label)
                if t is None:
                    row.update(rounds=0, times_s=None, min_s=None, median_s=None, q1_s=None, q3_s=None, throughput=None,
                               peak_mem_bytes=None, note="skipped above the quick size (too slow)")
                    if c.missing:
                        row.update(unavailable=c.missing, note=c.note if isinstance(c.note, str) else c.missing)
                    elif c.label in failed:
                        err = failed[c.label]
                        msg = (str(err).strip().splitlines() or [""])[0][:100]
                        row.update(unavailable=f"failed: {type(err).__name__}",
                                   note=f"failed here: {type(err).__name__}" + (f": {msg}" if msg else ""))
                else:
                    row.update(summarize(t), times_s=[float(v) for v in t])
                    row["throughput"] = work / row["median_s"] if row["median_s"] > 0 else None
                    row["peak_mem_bytes"] = peaks[c.label]
                    first, last = firsts[c.label]
                    row["first_call_s"] = first
                    note = c.note() if callable(c.note) else c.note
                    if c.compiles:
                        row["compile_s"] = max(0.0, first - last)
                        note = "; ".join(x for x in (f"first call {first:.1f} s (compiles with {c.compiles}; untimed "
                                                     f"warm-up, cached on disk afterwards)", note) if x)
                    row["note"] = note
                row.update(roofline.roofline_fields(cost, floors, row["dtype"], row["median_s"]))
                wl_rows.append(row)
            if wl.accuracy is not None:
                acc = wl.accuracy(data)
                say(f"  {wl.name}: {acc}")
                for r in wl_rows:
                    r["accuracy"] = acc
            add_ratios(wl_rows)
            if wl.teardown is not None:  # a dask cluster (left to the interpreter's exit if a contender raised)
                wl.teardown(data)
            del data
            load_after = load_average()
            for r in wl_rows:
                r.update(load_before=load_before, load_after=load_after)
                if r["median_s"] is not None:
                    say(f"  {r['contender'][:44]:44s} min {format_seconds(r['min_s']):>9} "
                        f"median {format_seconds(r['median_s']):>9} ({r['rounds']} rounds)")
            rows.extend(wl_rows)
            steady.append(max(0.0, time.perf_counter() - t_wl - first_excess))
    if not only or only in "compile":
        rows.extend(harness.measure_compile(quick=quick, log=say))
    return rows


def _kernel_cache_is_cold():
    """True when no cached fastrbf kernel is found on disk (the first calls will compile)."""
    import glob

    import numba

    places = [os.path.join(harness.package_root(), "fastrbf", "_jit", "__pycache__", "*.nbi")]
    cache_dir = getattr(numba.config, "CACHE_DIR", "")
    if cache_dir:
        places.append(os.path.join(cache_dir, "**", "*.nbi"))
    return not any(glob.glob(p, recursive=True) for p in places)
