"""What the workload families share: the seeded data and the optional peers.

Every data set is drawn from one seed, so a workload times the same data on every run
and two runs compare like with like.  A peer (scikit-learn, SciPy, faiss, dask) is a
contender only when its import succeeds, so the suite runs with whatever is installed;
the peers users would pick instead (:mod:`fastrbf.bench.workloads.peers`) keep a row
that says why they did not run.
"""

from types import ModuleType

import numpy as np

#: the seed of every workload's data set
SEED = 20261122


def seeded_rng() -> np.random.Generator:
    """A generator seeded with :data:`SEED`: the same data on every run."""
    return np.random.default_rng(SEED)


def try_import(name: str) -> ModuleType | None:
    """The module ``name``, or None when it is not installed (or fails to import).

    Examples
    --------
    >>> try_import("json").__name__, try_import("no_such_module_here")
    ('json', None)
    """
    try:
        return __import__(name, fromlist=["_"])
    except Exception:
        return None
