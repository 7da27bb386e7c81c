"""One parametrised pytest-benchmark test over every (workload, contender) pair of
``fastrbf.bench.workloads``: the same workloads as ``python -m fastrbf.bench``.

Tests are grouped by workload (``benchmark.group``), so pytest-benchmark prints one
table per workload; select one with ``-k sqdist-lowd``.  Each workload runs at its
quick size, or with ``FASTRBF_BENCH_FULL=1`` at its largest (design) size.  Peers that
are not installed are not in the parametrisation; contenders too slow above the quick
size are reported as skipped.  For verdicts that hold on a busy machine (contenders
timed in interleaved rounds, paired ratios) use ``python -m fastrbf.bench``.
``extra_info`` records the numba threads, the BLAS (library, kernel, threads) and the
workload's essential cost (flops, bytes read and written, exps: divide by the time for
the achieved rate; ``python -m fastrbf.bench`` measures the floors)."""

import dataclasses
import os

import numba
import pytest

from fastrbf import _threads
from fastrbf.bench import harness, workloads

QUICK = os.environ.get("FASTRBF_BENCH_FULL", "0") != "1"
_WORKLOADS = {wl.name: wl for wl in workloads.all_workloads()}
_TOO_SLOW = pytest.mark.skip(reason="too slow above the quick size (see Contender.full)")
_CASES = [
    pytest.param(wl.name, c.label, id=f"{wl.name}|{c.label}", marks=() if QUICK or c.full else _TOO_SLOW)
    for wl in _WORKLOADS.values()
    for c in wl.contenders
    if not c.missing  # a peer that is not installed (python -m fastrbf.bench shows its row)
]
_DATA = {}


def _release():
    """Drop the data set alive, after its workload's teardown (a dask cluster)."""
    for name, data in _DATA.items():
        if _WORKLOADS[name].teardown is not None:
            _WORKLOADS[name].teardown(data)
    _DATA.clear()


def _data(name):
    if name not in _DATA:
        _release()  # one data set alive at a time
        sizes = _WORKLOADS[name].sizes
        _DATA[name] = _WORKLOADS[name].setup(sizes[0] if QUICK else sizes[-1])
    return _DATA[name]


@pytest.fixture(scope="module", autouse=True)
def _release_at_end():
    yield
    _release()


@pytest.mark.parametrize("workload,contender", _CASES)
def test_workload(benchmark, workload, contender):
    wl = _WORKLOADS[workload]
    c = next(c for c in wl.contenders if c.label == contender)
    data = _data(workload)
    benchmark.group = workload
    benchmark.extra_info.update(
        contender=contender, kind=c.kind, threads=numba.get_num_threads(), blas=_threads.blas_info(),
        work=wl.work(data), unit=wl.unit, quick=QUICK, size=wl.sizes[0] if QUICK else wl.sizes[-1],
        cost=dataclasses.asdict(wl.cost(data)) if wl.cost is not None else None,  # flops, bytes, exps: the roofline
    )
    if getattr(c.fn, "self_timed", False):
        # the peer's own loop measures one iteration; record that as the result
        per_iter = harness.time_call(c.fn, data, 3)
        benchmark.extra_info["per_iteration_s"] = per_iter
        benchmark.pedantic(c.fn, args=(data,), rounds=1, iterations=1, warmup_rounds=0)
    else:
        benchmark.pedantic(c.fn, args=(data,), rounds=3, iterations=1, warmup_rounds=1)
