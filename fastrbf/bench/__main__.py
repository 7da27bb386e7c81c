"""``python -m fastrbf.bench``: runs :func:`fastrbf.bench.cli.main` (see there)."""

from fastrbf.bench.cli import main

main()
