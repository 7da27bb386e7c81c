"""The registry of the benchmark workloads: one module per family, in the order of the
report (the order of the table, the JSON rows and ``bench/``).

Each family module holds its workloads (data, work measure, contenders) and a
``workloads()`` that lists them; a family whose peers are missing (scikit-learn for the
estimators, dask and distributed for the cluster run) lists none.  Importing this
package imports every family module and, through them, fastrbf's public functions;
nothing is compiled until a workload runs.
"""

from ..harness import Workload
from . import approx, cluster, dask, distances, gp, gpu, kernels, linalg, models, neighbors, selection, sklearn

#: the family modules, in the order of the report
FAMILIES = (distances, kernels, cluster, linalg, models, selection, neighbors, gp, approx, sklearn, dask, gpu)


def all_workloads() -> list[Workload]:
    """All workloads, in the order of the report.

    Examples
    --------
    >>> [wl.name for wl in all_workloads()][:4]
    ['sqdist-lowd/float64', 'sqdist-lowd/float32', 'sqdist-highd/float64', 'sqdist-manyd/float64']
    """
    return [wl for family in FAMILIES for wl in family.workloads()]


def select(only: str | None = None) -> list[Workload]:
    """The workloads whose name contains ``only`` (all of them when None or empty), in the order of the report.

    Examples
    --------
    >>> [wl.name for wl in select("sqdist-lowd")]
    ['sqdist-lowd/float64', 'sqdist-lowd/float32']
    """
    return [wl for wl in all_workloads() if not only or only in wl.name]
