"""``python -m fastrbf.bench``: the benchmark suite against the NumPy reference and peers.

Quick sizes by default (under two minutes on 2 cores); ``--full`` runs the sizes of the
design document.  ``--json PATH`` writes the rows, ``--only NAME`` keeps the workloads
whose name contains NAME, ``--repeats N`` sets the timed calls per contender.  The
header gives the versions, the BLAS (threadpoolctl) and the numba threading layer (known
only after the first parallel call, so it is printed after the run).

The report (see :mod:`fastrbf._report`): ``--plot PATH`` draws the throughput of every
contender, one panel per workload (matplotlib, the extra ``fastrbf[plot]``);
``--compare OLD.json`` prints the change of every (workload, contender) time against a
saved run and marks the ones more than ``--threshold`` percent (default 10) slower as
``REGRESSION``; the exit status stays 0 unless ``--fail-on-regression`` is given (then
1).  ``--from RUN.json`` takes the rows of a saved run instead of running the suite, so
``python -m fastrbf.bench --from new.json --compare old.json --plot report.png`` only
reports.
"""

import argparse
import json
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
        ``--full``, ``--json PATH``, ``--only NAME``, ``--repeats N``; ``--from PATH``
        (rows of a saved run instead of running), ``--compare OLD``, ``--threshold PCT``,
        ``--fail-on-regression``, ``--plot PATH``.

    Returns
    -------
    list of dict
        The rows of :func:`fastrbf.benchmarks.run` (or of ``--from``).

    Raises
    ------
    SystemExit
        Status 2 for bad arguments; status 1 with ``--fail-on-regression`` when a row is
        more than ``--threshold`` percent slower than in ``--compare``.

    Examples
    --------
    >>> rows = main(["--only", "sqdist-lowd/float32", "--repeats", "1"])  # doctest: +ELLIPSIS
    fastrbf 0.1.0 | numba ...| sqdist-lowd/float32 | ...
    >>> rows[0]["workload"]
    'sqdist-lowd/float32'
    """
    p = argparse.ArgumentParser(prog="python -m fastrbf.bench", description=__doc__.splitlines()[0])
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", default=True, help="small sizes (default)")
    size.add_argument("--full", action="store_true", help="the full sizes of the design document")
    p.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    p.add_argument("--only", metavar="NAME", help="only workloads whose name contains NAME")
    p.add_argument("--repeats", type=_positive_int, help="timed calls per contender (default 5 quick, 7 full)")
    r = p.add_argument_group("report")
    r.add_argument("--from", dest="from_json", metavar="PATH",
                   help="report on the rows of a saved run (--json) instead of running the suite")
    r.add_argument("--plot", metavar="PATH", help="draw the throughputs into an image (.png, .svg, .pdf); needs matplotlib")
    r.add_argument("--compare", metavar="OLD", help="compare the times with a saved run (--json)")
    r.add_argument("--threshold", type=_threshold, default=10.0, metavar="PCT",
                   help="percent slower that counts as a regression (default 10)")
    r.add_argument("--fail-on-regression", action="store_true", help="exit with status 1 if --compare finds a regression")
    args = p.parse_args(argv)
    if args.from_json and (args.full or args.repeats):
        p.error("--from reports on a saved run: --full and --repeats do not apply")
    if args.fail_on_regression and not args.compare:
        p.error("--fail-on-regression needs --compare OLD")

    from fastrbf import _report, benchmarks

    old_rows = _load(p, args.compare, "--compare") if args.compare else None
    if args.plot:  # fail before a long run, not after it
        try:
            _report._pyplot()
        except ImportError as exc:
            p.error(str(exc))
    if args.from_json:
        rows = _load(p, args.from_json, "--from")
        if args.only:
            rows = [row for row in rows if args.only in row["workload"]]
        print(f"rows of {args.from_json}" + (f" (workloads containing {args.only!r})" if args.only else ""))
        print(benchmarks.format_table(rows))
    else:
        rows = _run(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
        print(f"rows written to {args.json}")
    regressions = 0
    if old_rows is not None:
        if args.only:
            old_rows = [row for row in old_rows if args.only in row["workload"]]
        result = _report.compare(old_rows, rows, threshold=args.threshold)
        print(f"\nchange against {args.compare} (time per call; + is slower):")
        print(_report.format_compare(result, threshold=args.threshold))
        regressions = sum(row["status"] == "REGRESSION" for row in result)
    if args.plot and not rows:
        p.error("--plot: no benchmark rows to draw (check --only)")
    if args.plot:
        _report.plot(rows, args.plot, baseline=old_rows, threshold=args.threshold, title=_title(rows, args))
        print(f"figure written to {args.plot}")
    if regressions and args.fail_on_regression:
        print(f"--fail-on-regression: {regressions} regression(s); exit status 1", file=sys.stderr)
        sys.exit(1)
    return rows


def _load(parser, path, flag):
    from fastrbf import _report

    try:
        return _report.load_rows(path)
    except (OSError, ValueError) as exc:
        parser.error(f"{flag}: {exc}")


def _title(rows, args):
    import fastrbf

    src = os.path.basename(args.from_json) if args.from_json else ("full sizes" if args.full else "quick sizes")
    r = rows[0]
    return f"fastrbf {fastrbf.__version__} | {src} | {r.get('threads', '?')} numba threads | BLAS {r.get('blas', '?')}"


def _run(args):
    import numba
    import numpy as np

    import fastrbf
    from fastrbf import _threads, benchmarks

    quick = not args.full
    print(f"fastrbf {fastrbf.__version__} | numba {numba.__version__} | numpy {np.__version__} | "
          f"python {platform.python_version()} | cores {os.cpu_count()} | numba threads {numba.get_num_threads()}")
    print(f"BLAS (threadpoolctl): {_threads.blas_info()} | sizes: {'quick' if quick else 'full'}")
    rows = benchmarks.run(quick=quick, repeats=args.repeats, only=args.only, log=lambda s: print(s, file=sys.stderr, flush=True))
    try:
        layer: str = numba.threading_layer()
    except ValueError:
        layer = "not initialised"
    print(f"numba threading layer: {layer}")
    print("peak mem = peak traced memory (tracemalloc) of one call; ratios are medians within this run")
    print(benchmarks.format_table(rows))
    return rows


if __name__ == "__main__":
    main()
