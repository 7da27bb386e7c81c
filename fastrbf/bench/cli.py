"""``python -m fastrbf.bench``: the benchmark suite against the NumPy reference and peers.

One size per workload by default (``--quick``: about two minutes on 2 cores once the
kernels are compiled); ``--full`` runs every size of each workload, up to millions of
points, and adds how the time grows with N. ``--json PATH`` writes the run
(header and rows), ``--only NAME`` keeps the workloads whose name contains NAME
(``--only compile``: just the compile and import times), ``--repeats N`` sets the timed
rounds at most, ``--threads N`` limits every contender to N threads. The contenders of a
workload are timed in interleaved rounds; the table gives minimum / median, the
interquartile range and paired ratios with a verdict ("faster", "slower" or "within
noise"; see :mod:`fastrbf.bench.harness`). The header gives the versions, the BLAS
(threadpoolctl) and the load average, which is recorded again after the run; a warning
says when it is above the core count.  Before the first workload the run measures this
machine's floors (GEMM peaks, memory bandwidth, exp rates; about 3 s, see
:mod:`fastrbf.bench.roofline`), printed in the header; each row gives the fraction of
its workload's binding floor. A progress line per workload (with an estimate of
the time left) goes to standard error.

The report (see :mod:`fastrbf.bench.report` and :mod:`fastrbf.bench.figure`):
``--plot PATH`` draws the time per call of every contender with its spread, one panel
per workload (matplotlib, in the extra ``fastrbf[bench]``); ``--compare OLD.json``
prints the change of every (workload, contender) time against a saved run and marks as
``REGRESSION`` the ones more than ``--threshold`` percent (default 10) slower *and*
beyond the noise of both runs; the exit status stays 0 unless ``--fail-on-regression``
is given (then 1).  ``--from RUN.json`` takes the rows of a saved run instead of
running the suite, so ``python -m fastrbf.bench --from new.json --compare old.json
--plot report.png`` only reports.

The command line lives here rather than in ``__main__.py`` (which only calls
:func:`main`): pytest does not collect the doctests of a ``__main__.py``, and the
package can expose :func:`main` without importing its ``__main__`` module, which
``python -m`` would then run a second time.
"""

import argparse
import os
import platform
import sys


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1; got {text!r}")
    return value


def _threshold(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0 (percent); got {text!r}")
    return value


def main(argv=None):
    """Run the benchmark suite (or load a saved run) and print one table; optionally
    compare with an older run and draw the report figure.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).  ``--quick`` (default) or
        ``--full``, ``--json PATH``, ``--only NAME``, ``--repeats N`` (rounds), ``--threads N``; ``--from PATH``
        (rows of a saved run instead of running), ``--compare OLD``, ``--threshold PCT``,
        ``--fail-on-regression``, ``--plot PATH``.

    Returns
    -------
    list of dict
        The rows of :func:`fastrbf.bench.suite.run` (or of ``--from``).

    Raises
    ------
    SystemExit
        Status 2 for bad arguments; status 1 with ``--fail-on-regression`` when a row is
        more than ``--threshold`` percent slower than in ``--compare``, beyond the noise
        of both runs.

    Examples
    --------
    >>> rows = main(["--only", "sqdist-lowd/float32", "--repeats", "1"])  # doctest: +ELLIPSIS
    fastrbf 0.1.0 | numba ...
    ...
    [1] sqdist-lowd/float32
    ...
    >>> rows[0]["workload"]
    'sqdist-lowd/float32'
    """
    p = argparse.ArgumentParser(prog="python -m fastrbf.bench", description=__doc__.splitlines()[0])
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", default=True, help="small sizes (default)")
    size.add_argument("--full", action="store_true", help="every size of each workload and how time grows with N")
    p.add_argument("--json", metavar="PATH", help="write the run (header and rows) as JSON")
    p.add_argument("--only", metavar="NAME", help="only workloads whose name contains NAME")
    p.add_argument("--threads", type=_positive_int, metavar="N",
                   help="limit every contender to N threads (fastrbf, BLAS, OpenMP); on a busy machine 1 gives verdicts "
                        "that hold better from run to run (default: all cores)")
    p.add_argument("--repeats", type=_positive_int,
                   help="timed rounds per workload at most (default 15 quick, 9 full; fewer once its time budget is spent)")
    r = p.add_argument_group("report")
    r.add_argument("--from", dest="from_json", metavar="PATH",
                   help="report on the rows of a saved run (--json) instead of running the suite")
    r.add_argument("--plot", metavar="PATH", help="draw the times into an image (.png, .svg, .pdf); needs matplotlib")
    r.add_argument("--compare", metavar="OLD", help="compare the times with a saved run (--json)")
    r.add_argument("--threshold", type=_threshold, default=10.0, metavar="PCT",
                   help="percent slower that counts as a regression when also beyond the noise (default 10)")
    r.add_argument("--fail-on-regression", action="store_true", help="exit with status 1 if --compare finds a regression")
    args = p.parse_args(argv)
    if args.from_json and (args.full or args.repeats or args.threads):
        p.error("--from reports on a saved run: --full, --repeats and --threads do not apply")
    if args.fail_on_regression and not args.compare:
        p.error("--fail-on-regression needs --compare OLD")

    from . import figure, report

    old_meta, old_rows = _load(p, args.compare, "--compare") if args.compare else ({}, None)
    if args.plot:  # fail before a long run, not after it
        try:
            figure.pyplot()
        except ImportError as exc:
            p.error(str(exc))
    if args.from_json:
        meta, rows = _load(p, args.from_json, "--from")
        if args.only:
            rows = [row for row in rows if args.only in row["workload"]]
        print(f"rows of {args.from_json}" + (f" (workloads containing {args.only!r})" if args.only else "")
              + (f" | {_load_text(meta)}" if meta.get("load_before") else ""))
        if meta.get("floors"):
            from . import roofline

            print(roofline.format_floors(meta["floors"]))
        print(report.format_table(rows))
    else:
        meta, rows = _run(args)
    if args.json:
        report.save_run(args.json, rows, meta)
        print(f"run written to {args.json}")
    regressions = 0
    if old_rows is not None:
        if args.only:
            old_rows = [row for row in old_rows if args.only in row["workload"]]
        result = report.compare(old_rows, rows, threshold=args.threshold)
        loads = (f" | load then {_load_text(old_meta)}; now {_load_text(meta)}"
                 if old_meta.get("load_before") and meta.get("load_before") else "")
        print(f"\nchange against {args.compare} (time per call; + is slower){loads}:")
        print(report.format_compare(result, threshold=args.threshold))
        regressions = sum(row["status"] == "REGRESSION" for row in result)
    if args.plot and not any(row["workload"] != "compile" for row in rows):
        p.error("--plot: no benchmark rows to draw (check --only; the compile rows are not drawn)")
    if args.plot:
        figure.plot(rows, args.plot, baseline=old_rows, threshold=args.threshold, title=_title(rows, args))
        print(f"figure written to {args.plot}")
    if regressions and args.fail_on_regression:
        print(f"--fail-on-regression: {regressions} regression(s); exit status 1", file=sys.stderr)
        sys.exit(1)
    return rows


def _load(parser, path, flag):
    from . import report

    try:
        return report.load_run(path)
    except (OSError, ValueError) as exc:
        parser.error(f"{flag}: {exc}")


def _load_text(meta):
    """The load averages of a run header, e.g. ``load average 0.52 before, 1.90 after (2 cores)``."""
    def one(v):
        return f"{v[0]:.2f}" if v else "?"

    return (f"load average {one(meta.get('load_before'))} before, {one(meta.get('load_after'))} after "
            f"({meta.get('cores', '?')} cores)")


def _title(rows, args):
    import fastrbf

    src = os.path.basename(args.from_json) if args.from_json else ("full sizes" if args.full else "quick sizes")
    r = rows[0]
    return f"fastrbf {fastrbf.__version__} | {src} | {r.get('threads', '?')} numba threads | BLAS {r.get('blas', '?')}"


def _run(args):
    import numba
    import numpy as np

    import fastrbf
    from fastrbf import _threads

    from . import harness, report, roofline, suite, workloads

    suite.quiet_threading_layer()  # before numba's thread count is asked (which starts the layer)
    quick = not args.full
    meta = dict(fastrbf=fastrbf.__version__, numba=numba.__version__, numpy=np.__version__,
                python=platform.python_version(), cores=os.cpu_count(), numba_threads=numba.get_num_threads(),
                blas=_threads.blas_info(), sizes="quick" if quick else "full", thread_limit=args.threads,
                load_before=harness.load_average())
    print(f"fastrbf {meta['fastrbf']} | numba {meta['numba']} | numpy {meta['numpy']} | python {meta['python']} | "
          f"cores {meta['cores']} | numba threads {meta['numba_threads']}"
          + (f" | every contender limited to {args.threads} thread(s)" if args.threads else ""))
    print(f"BLAS (threadpoolctl): {meta['blas']} | sizes: {meta['sizes']} | load average (1, 5, 15 min) before: "
          f"{_fmt_load(meta['load_before'])}")
    _warn(harness.busy_warning(meta["load_before"]))
    floors: dict = {}
    if workloads.select(args.only):  # not for the compile rows alone
        floors = suite.measure_floors(args.threads)
        meta["floors"] = floors
        print(roofline.format_floors(floors))
    rows = suite.run(quick=quick, repeats=args.repeats, only=args.only, progress=True, n_threads=args.threads,
                     floors=floors)
    meta["load_after"] = harness.load_average()
    try:
        layer: str = numba.threading_layer()
    except ValueError:
        layer = "not initialised"
    meta["threading_layer"] = layer
    print(f"numba threading layer: {layer} | load average after: {_fmt_load(meta['load_after'])}")
    _warn(harness.busy_warning(meta["load_after"]))
    print(report.format_table(rows))
    return meta, rows


def _fmt_load(load):
    return "unknown" if not load else ", ".join(f"{v:.2f}" for v in load)


def _warn(text):
    if text:
        print(text)
        print(text, file=sys.stderr)

