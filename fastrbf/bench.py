"""``python -m fastrbf.bench``: the benchmark suite against the NumPy reference and peers.

Quick sizes by default (under two minutes on 2 cores); ``--full`` runs the sizes of the
design document.  ``--json PATH`` writes the rows.
"""

import argparse
import json
import os
import platform
import sys


def main(argv=None):
    """Run the benchmark suite and print one table.

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
    p.add_argument("--repeats", type=int, help="timed calls per contender")
    args = p.parse_args(argv)

    import numba
    import numpy as np

    import fastrbf
    from fastrbf import _threads, benchmarks

    quick = not args.full
    print(f"fastrbf {fastrbf.__version__} | numba {numba.__version__} | numpy {np.__version__} | "
          f"python {platform.python_version()} | cores {os.cpu_count()} | numba threads {numba.get_num_threads()}")
    print(f"BLAS: {_threads.blas_info()} | sizes: {'quick' if quick else 'full'}")
    rows = benchmarks.run(quick=quick, repeats=args.repeats, only=args.only, log=lambda s: print(s, file=sys.stderr, flush=True))
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not initialised"
    print(f"numba threading layer: {layer}")
    print(benchmarks.format_table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
        print(f"rows written to {args.json}")
    return rows


if __name__ == "__main__":
    main()
