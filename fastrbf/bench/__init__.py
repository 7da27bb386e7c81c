"""The benchmark suite of fastrbf: ``python -m fastrbf.bench`` and the workloads of the
pytest-benchmark suite in ``bench/``.

The package, from the bottom layer up (each module imports only those below it):

- :mod:`~fastrbf.bench.roofline`: this machine's floors (GEMM peaks, memory bandwidth,
  exp rates; measured once per run) and each row's fraction of its workload's binding
  floor.
- :mod:`~fastrbf.bench.harness`: what a workload and a contender are; warm-up,
  interleaved rounds, summaries, paired ratios and verdicts; load averages; compile and
  import times measured in fresh processes.
- :mod:`~fastrbf.bench.workloads`: one module per family of fastrbf (distances,
  kernels, cluster, linalg, models, neighbors, gp, approx, sklearn, dask), the peers
  users would pick instead (``peers``: scikit-learn-intelex, faiss, pykeops) and the
  registry that lists them in the order of the report.
- :mod:`~fastrbf.bench.report`: the table, saved runs (``--json``) and ``--compare``;
  :mod:`~fastrbf.bench.figure`: ``--plot`` (matplotlib).
- :mod:`~fastrbf.bench.suite`: :func:`~fastrbf.bench.suite.run`, the registered
  workloads through the harness.
- :mod:`~fastrbf.bench.cli`: the command line, :func:`main`.

``import fastrbf`` does not import this package; importing it imports only the command
line's argument parsing (the rest loads when a run or a report needs it).
"""

from .cli import main

__all__ = ["main"]
