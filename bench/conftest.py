"""pytest-benchmark suite over the workloads of :mod:`fastrbf.bench.workloads`.

Quick sizes by default; ``FASTRBF_BENCH_FULL=1`` uses the full sizes.  Run with
``python -m pytest bench/ --benchmark-only`` (ratios: compare rows of one run).
"""
