"""``python -m fastrbf.bench``: the benchmark suite against the NumPy reference and peers.

Quick sizes by default (under two minutes on 2 cores); ``--full`` runs the sizes of the
design document.  ``--json PATH`` writes the rows, ``--only NAME`` keeps the workloads
whose name contains NAME, ``--repeats N`` sets the timed calls per contender.  The
header gives the versions, the BLAS (threadpoolctl) and the numba threading layer (known
only after the first parallel call, so it is printed after the run).
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


def main(argv=None):
    """Run the benchmark suite and print one table.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).  ``--quick`` (default) or
        ``--full``, ``--json PATH``, ``--only NAME``, ``--repeats N``.

    Returns
    -------
    list of dict
        The rows of :func:`fastrbf.benchmarks.run`.

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
    args = p.parse_args(argv)

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
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
        print(f"rows written to {args.json}")
    return rows


if __name__ == "__main__":
    main()
