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

from . import harness, workloads
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


@contextlib.contextmanager
def _limit_threads(n_threads):
    """Limit fastrbf (numba), BLAS and OpenMP (scikit-learn) threads for the block; None: no limit."""
    if n_threads is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with _threads.threads(n_threads) as n, threadpool_limits(limits=n, user_api="openmp"):
        yield


def run(quick=True, repeats=None, only=None, log=None, progress=False, n_threads=None):
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
        ``note``.  Skipped contenders have ``median_s=None``; the rows of
        :func:`~fastrbf.bench.harness.measure_compile` follow with ``workload="compile"``.

    Examples
    --------
    >>> rows = run(quick=True, repeats=1, only="sqdist-lowd/float32")
    >>> [r["contender"] for r in rows][:3]
    ['fastrbf', 'fastrbf out=', 'numpy reference']
    >>> all(r["median_s"] > 0 for r in rows)
    True
    """
    import numba

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
        for k, (wl, size) in enumerate(todo):
            t_wl = time.perf_counter()
            left = (f"about {format_duration(float(np.median(steady)) * (len(todo) - k))} left" if steady
                    else "time left known after the first workload")
            load_before = load_average()
            data = wl.setup(size)
            work = wl.work(data)
            shape = wl.describe(data) if wl.describe else ""
            active = [c for c in wl.contenders if quick or c.full or size == wl.sizes[0]]
            say(f"[{k + 1}/{len(todo)}] {wl.name} ({shape}): warming up {len(active)} contenders, then timing them in "
                f"rounds; {format_duration(time.perf_counter() - t_run)} elapsed, {left}")
            first_excess = 0.0
            caps = []
            peaks = {}
            for c in active:
                # fastrbf's first call may compile (cold cache): a second call gives the steady time
                # and the peak memory (compilation's own allocations would be traced too)
                n_first = 2 if c.kind == FASTRBF else 1
                first, last, peaks[c.label] = warm_up(c.fn, data, warmup_s, min_calls=n_first,
                                                      trace_call=None if getattr(c.fn, "self_timed", False) else n_first)
                first_excess += max(0.0, first - max(last, warmup_s))
                caps.append(min(max_rounds, SLOW_ROUNDS) if last > SLOW_CALL_S else max_rounds)
                if c.kind == FASTRBF and first > 5.0 and first > 3 * last:
                    say(f"  {c.label}: first call {first:.1f} s (compiling kernels), then {format_seconds(last)}")
            times = time_rounds([c.fn for c in active], data, rounds=max(caps), budget_s=budget, seed=k, caps=caps)
            by_label = dict(zip([c.label for c in active], times, strict=True))
            wl_rows = []
            for c in wl.contenders:
                row = dict(workload=wl.name, size=list(size) if isinstance(size, tuple) else size, n=n_of(size),
                           shape=shape, accuracy="", dtype=str(data["X"].dtype), contender=c.label, kind=c.kind,
                           unit=wl.unit, threads=numba.get_num_threads(), blas=_threads.blas_info(), note="")
                t = by_label.get(c.label)
                if t is None:
                    row.update(rounds=0, times_s=None, min_s=None, median_s=None, q1_s=None, q3_s=None, throughput=None,
                               peak_mem_bytes=None, note="skipped above the quick size (too slow)")
                else:
                    row.update(summarize(t), times_s=[float(v) for v in t])
                    row["throughput"] = work / row["median_s"] if row["median_s"] > 0 else None
                    row["peak_mem_bytes"] = peaks[c.label]
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
